"""Config section `cron`: the scheduler of unattended jobs (see herald.cron)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from herald.config.strict import StrictModel, renamed_key


class CronConfig(StrictModel):
    enabled: bool = Field(True, description="`herald gateway run` also runs the scheduler")
    tick_seconds: float = Field(30.0, gt=0, description="how often a scheduler looks for due jobs")
    grace_seconds: float = Field(
        300.0, ge=0, description="an occurrence later than this was missed (scheduler down)"
    )
    catch_up: Literal["skip", "once", "all"] = Field(
        "once",
        description="default for missed occurrences: skip records them, once runs the latest "
        "late, all runs each",
    )
    lock_ttl_seconds: float = Field(
        900.0, gt=0, description="a run lock not refreshed for this long belongs to a dead run"
    )
    run_timeout_seconds: float = Field(1800.0, gt=0, description="a run is interrupted after this")
    failure_notice_after: int = Field(
        3, ge=1, description="consecutive failures before the owner gets one notice"
    )
    default_deliver: str = Field(
        "log",
        description="where results go when a job names no target: log, file:PATH, PLATFORM:CHAT",
    )
    toolset: str = Field("herald-cron", description="the toolset bundle jobs run with")
    max_iterations: int = Field(
        30, ge=1, description="model calls allowed per run (a job may lower it)"
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed_max_turns(cls, data: Any) -> Any:
        return renamed_key(data, "max_turns", "max_iterations", "cron")

    script_timeout_seconds: float = Field(60.0, gt=0, description="limit for a pre-run script")
    timezone: str | None = Field(
        None, description="IANA zone for jobs that name none; unset = this machine's zone"
    )
    cwd: str | None = Field(
        None, description="working directory of job runs (default <home>/cron/work)"
    )
