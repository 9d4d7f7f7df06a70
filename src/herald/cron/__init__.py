"""Scheduled jobs (L6): prompts that run unattended on a schedule and never fail silently.

`parse_schedule` reads a schedule (cron, interval, one-shot); `CronStore` keeps
jobs, their append-only run history, run locks, incidents, the delivery outbox
and scheduler heartbeats in ``<home>/cron/cron.db``; `add_job` / `edit_job`
validate and scan a job; `Scheduler.tick(now)` gives every due occurrence exactly
one record; `run_daemon` loops it; `GatewayCron` runs it inside ``herald gateway
run`` and delivers to chats through the gateway's ledger; `scheduler_status` says
whether anything runs the jobs of a home. The ``cronjob`` tool is
`herald.cron.tool` (listed in the toolbox, imported lazily: it needs the tools layer).
"""

from herald.cron.schedule import Schedule, ScheduleError, local_zone_name, parse_schedule

__all__ = ["Schedule", "ScheduleError", "local_zone_name", "parse_schedule"]
