"""Config section `gateway.watchdog`: how the gateway proves each platform is alive
and what it does when one is not (herald.gateway.watchdog)."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class WatchdogConfig(StrictModel):
    enabled: bool = Field(True, description="restart a platform whose traffic stopped")
    check_every: float = Field(5.0, gt=0, description="seconds between health checks")
    slack_seconds: float = Field(
        15.0,
        ge=0,
        description="added to a platform's own rhythm (long-poll timeout, heartbeat interval) "
        "before its silence counts as a dead link",
    )
    restart_backoff: float = Field(
        2.0, gt=0, description="seconds before the first restart; doubled after each failure"
    )
    restart_backoff_max: float = Field(
        300.0, gt=0, description="the longest wait between restarts of one platform"
    )
    down_after_errors: int = Field(
        5, ge=1, description="consecutive errors after which a platform counts as down"
    )
    delivery_backoff: float = Field(
        5.0, gt=0, description="seconds before a failed reply is retried; doubled each time"
    )
    delivery_backoff_max: float = Field(
        900.0, gt=0, description="the longest wait between retries of one undelivered reply"
    )
    delivery_give_up_after: float = Field(
        86400.0,
        gt=0,
        description="an undelivered reply older than this is given up (marked dead)",
    )


__all__ = ["WatchdogConfig"]
