"""Config section `learning`: the background review that saves memories and skills after
a turn."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class LearningConfig(StrictModel):
    enabled: bool = True
    memory_every_user_turns: int = Field(
        6, ge=1, description="review for durable facts every N user turns"
    )
    skill_min_tool_iterations: int = Field(
        5, ge=1, description="review for a reusable skill after a turn this busy"
    )
    max_iterations: int = Field(8, ge=1, description="the reviewer's own iteration budget")
