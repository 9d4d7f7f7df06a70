"""Config section `backup`: scheduled backups of the home through Herald's own cron (see
herald.homes and herald.cron.builtin)."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class BackupConfig(StrictModel):
    schedule: str | None = Field(
        None,
        description="when to back the home up (a cron schedule such as '0 3 * * *' or 'every 1d'); "
        "run by the scheduler of `herald gateway run` or `herald cron daemon`; unset = never",
    )
    keep: int = Field(7, ge=1, description="scheduled backups keep the newest N in <home>/backups")
