"""Config sections `skills` and `curator`: the skill library and its curator (the
background review's `learning` section lives in schema_learning.py)."""

from __future__ import annotations

from pydantic import Field, model_validator

from herald.config.strict import StrictModel


class SkillsConfig(StrictModel):
    enabled: bool = Field(
        True, description="offer skills to the model (index, tools and /SKILL-NAME commands)"
    )
    external_dirs: list[str] = Field(
        default_factory=list,
        description="extra read-only SKILL.md directories (e.g. another agent's skills); "
        "relative paths are relative to the home. Never override home or bundled skills",
    )


class CuratorConfig(StrictModel):
    enabled: bool = Field(True, description="retire unused agent-created skills when idle")
    interval_hours: float = Field(24.0, gt=0, description="hours between curator runs")
    stale_after_days: float = Field(
        30.0, gt=0, description="days without use before an agent-created skill is marked stale"
    )
    archive_after_days: float = Field(
        90.0, gt=0, description="days without use before it moves to skills/.archive/"
    )
    keep_snapshots: int = Field(5, ge=1, description="skills/ snapshots kept for rollback")

    @model_validator(mode="after")
    def _archive_after_stale(self) -> CuratorConfig:
        if self.archive_after_days < self.stale_after_days:
            raise ValueError(
                f"archive_after_days ({self.archive_after_days:g}) must be at least "
                f"stale_after_days ({self.stale_after_days:g})"
            )
        return self
