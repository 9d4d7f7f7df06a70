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

from typing import TYPE_CHECKING

from herald.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time each name loads on first use
    from herald.cron.daemon import GatewayCron, SchedulerStatus, run_daemon, scheduler_status
    from herald.cron.jobs import JobError, JobSpec, add_job, edit_job, remove_job, set_enabled
    from herald.cron.records import Job, RunRecord
    from herald.cron.schedule import Schedule, ScheduleError, local_zone_name, parse_schedule
    from herald.cron.scheduler import Scheduler, TickReport
    from herald.cron.store import CronStore, CronStoreError
    from herald.cron.targets import SendOutcome, TargetError, parse_target

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.cron.daemon": (
        "GatewayCron",
        "SchedulerStatus",
        "run_daemon",
        "scheduler_status",
    ),
    "herald.cron.jobs": (
        "JobError",
        "JobSpec",
        "add_job",
        "edit_job",
        "remove_job",
        "set_enabled",
    ),
    "herald.cron.records": (
        "Job",
        "RunRecord",
    ),
    "herald.cron.schedule": (
        "Schedule",
        "ScheduleError",
        "local_zone_name",
        "parse_schedule",
    ),
    "herald.cron.scheduler": (
        "Scheduler",
        "TickReport",
    ),
    "herald.cron.store": (
        "CronStore",
        "CronStoreError",
    ),
    "herald.cron.targets": (
        "SendOutcome",
        "TargetError",
        "parse_target",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CronStore",
    "CronStoreError",
    "GatewayCron",
    "Job",
    "JobError",
    "JobSpec",
    "RunRecord",
    "Schedule",
    "ScheduleError",
    "Scheduler",
    "SchedulerStatus",
    "SendOutcome",
    "TargetError",
    "TickReport",
    "add_job",
    "edit_job",
    "local_zone_name",
    "parse_schedule",
    "parse_target",
    "remove_job",
    "run_daemon",
    "scheduler_status",
    "set_enabled",
]
