"""Config section `delegation`: sub-agents started by the `delegate_task` tool (see
herald.delegation)."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class DelegationConfig(StrictModel):
    max_iterations: int = Field(50, ge=1, description="model calls allowed to each sub-agent")
    timeout_seconds: float = Field(
        600.0,
        gt=0,
        description="wall-clock limit of one sub-agent; it is then stopped and its partial "
        "work returned",
    )
    max_depth: int = Field(
        1, ge=1, le=8, description="how deep sub-agents may nest (1: sub-agents never delegate)"
    )
    max_concurrent: int = Field(
        10, ge=1, description="sub-agents of one call running at once; the rest wait their turn"
    )
    max_children_per_call: int = Field(
        16, ge=1, description="tasks one delegate_task call may hand out"
    )
    toolset: str = Field(
        "herald-delegate", description="the toolset bundle fresh sub-agents get by default"
    )
