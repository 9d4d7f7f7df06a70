"""Failure streaks: after N consecutive failed runs the owner gets one notice with the
last error (an incident opens); further failures with the same error only update the
incident, a different error gets one more notice; the next successful run closes the
incident with one "recovered" notice. Skipped and missed records do not break or
extend a streak: they are not runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from herald.cron.targets import deliver

if TYPE_CHECKING:
    from herald.config import HeraldHome
    from herald.cron.store import CronStore, Job, RunRecord

_RUN_STATUSES = ("ok", "failed", "blocked")


def failure_streak(store: CronStore, job_name: str) -> int:
    streak = 0
    for record in reversed(store.runs(job_name, limit=200)):
        if record.status not in _RUN_STATUSES:
            continue
        if record.status != "failed":
            break
        streak += 1
    return streak


def error_of(record: RunRecord) -> str:
    return f"{record.reason or 'failed'}: {record.error or 'no detail'}"


def after_record(
    store: CronStore, home: HeraldHome, job: Job, record: RunRecord, threshold: int
) -> None:
    incident = store.open_incident(job.id)
    if record.status == "ok":
        if incident is not None:
            store.close_incident(incident.id)
            text = (
                f"Scheduled job '{job.name}' recovered: it ran fine again after "
                f"{incident.failures} failed run(s). The last error was: {incident.last_error}"
            )
            deliver(store, home, job_name=job.name, target_text=job.deliver, what="recovered",
                    text=text, run_id=record.id, created_by=job.created_by,
                    origin=job.origin)  # fmt: skip
        return
    if record.status != "failed":
        return
    streak = failure_streak(store, job.name)
    if streak < threshold:
        return
    error = error_of(record)
    if incident is None:
        store.start_incident(job, streak, error)
    elif incident.last_error == error:
        store.update_incident(incident.id, streak, error)
        return  # the same failure again: one incident, no new message
    else:
        store.update_incident(incident.id, streak, error)
    text = (
        f"Scheduled job '{job.name}' has failed {streak} times in a row. Last error: {error}. "
        f"See `herald cron runs {job.name}`; pause it with `herald cron pause {job.name}`."
    )
    deliver(store, home, job_name=job.name, target_text=job.deliver, what="failing", text=text,
            run_id=record.id, created_by=job.created_by, origin=job.origin)  # fmt: skip


__all__ = ["after_record", "error_of", "failure_streak"]
