"""Config section `checkpoints`: snapshots of a session's working directory taken before
a tool changes it, so `/rollback` can undo the change (see herald.checkpoints)."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class CheckpointsConfig(StrictModel):
    enabled: bool = Field(
        True, description="snapshot the workdir before file-changing tools and commands"
    )
    max_file_mb: float = Field(
        10.0, gt=0, description="files larger than this are left out of a checkpoint (listed)"
    )
    max_total_mb: float = Field(
        500.0,
        gt=0,
        description="a checkpoint holds at most this much; the largest files are left out first",
    )
    keep_last: int = Field(50, ge=1, description="prune keeps the newest N checkpoints per workdir")
    keep_days: float = Field(
        7.0, ge=0, description="prune keeps every checkpoint younger than this many days"
    )
