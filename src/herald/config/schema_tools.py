"""Config sections for the tool system: which toolsets are exposed, guardrail thresholds."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class ToolsetsConfig(StrictModel):
    enabled: list[str] = Field(default_factory=list, description="extra toolsets to expose")
    disabled: list[str] = Field(default_factory=list, description="toolsets or tools to hide")
