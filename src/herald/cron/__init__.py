"""Scheduled jobs (L6): prompts that run unattended on a schedule and never fail silently.

`parse_schedule` reads a schedule (cron, interval, one-shot); `CronStore` keeps
jobs, their append-only run history, run locks, incidents, the delivery outbox
and scheduler heartbeats in ``<home>/cron/cron.db``; `Scheduler.tick(now)` runs
every due occurrence exactly once and records how each ended; `run_daemon`
loops it; `GatewayCron` runs it inside ``herald gateway run`` and delivers to
chats through the gateway's ledger. The ``cronjob`` tool lives in
`herald.cron.tool`.
"""

from herald.cron.schedule import Schedule, ScheduleError, local_zone_name, parse_schedule

__all__ = ["Schedule", "ScheduleError", "local_zone_name", "parse_schedule"]
