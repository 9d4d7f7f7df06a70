"""Config sections for the tool system: which toolsets are exposed, guardrail thresholds."""

from __future__ import annotations

from pydantic import Field, model_validator

from herald.config.strict import StrictModel


class CustomToolset(StrictModel):
    tools: list[str] = Field(default_factory=list, description="tool names")
    includes: list[str] = Field(default_factory=list, description="other toolsets to include")


class ToolsetsConfig(StrictModel):
    enabled: list[str] = Field(default_factory=list, description="extra toolsets to expose")
    disabled: list[str] = Field(
        default_factory=list,
        description="toolsets or tools to hide (a bundle such as herald-cli keeps its core tools)",
    )
    custom: dict[str, CustomToolset] = Field(
        default_factory=dict, description="your own named toolsets, usable in enabled/disabled"
    )
    deferred: list[str] = Field(
        default_factory=list,
        description="tools sent by name and one line only; tool_search loads their schemas",
    )
    defer_external: bool = Field(
        True, description="defer the tools MCP servers and plugins add (see deferred)"
    )


class GuardrailsConfig(StrictModel):
    """When a turn loops on tool calls that go nowhere: warn the model, then stop.

    Counts are per turn. `hard_stop` unset means: stop only on unattended surfaces
    (gateway platforms, cron, webhook, an API without an approver); elsewhere the
    halt threshold only sharpens the warning."""

    enabled: bool = True
    hard_stop: bool | None = Field(
        None, description="end the turn at a halt threshold; unset = only when unattended"
    )
    identical_failure_warn: int = Field(2, ge=1, description="same call failing N times")
    identical_failure_halt: int = Field(4, ge=1)
    tool_failure_warn: int = Field(4, ge=1, description="one tool failing N times in a row")
    tool_failure_halt: int = Field(8, ge=1)
    no_progress_warn: int = Field(
        3, ge=1, description="same read-only call giving the same result N times"
    )
    no_progress_halt: int = Field(6, ge=1)

    @model_validator(mode="after")
    def _halt_after_warn(self) -> GuardrailsConfig:
        for kind in ("identical_failure", "tool_failure", "no_progress"):
            warn, halt = getattr(self, f"{kind}_warn"), getattr(self, f"{kind}_halt")
            if halt < warn:
                raise ValueError(f"guardrails.{kind}_halt ({halt}) must be >= {kind}_warn ({warn})")
        return self
