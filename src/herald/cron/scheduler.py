"""`Scheduler.tick(now)`: give every due occurrence of every job exactly one record.

For each job, as of `now` (a controllable clock: ``herald cron tick --at``):

1. A run lock whose holder died (its pid is gone on this host) or whose TTL passed
   belongs to a crashed run: its occurrence is recorded ``failed`` (crashed) and
   the lock released.
2. A live lock means a run is going: later due occurrences are recorded
   ``skipped`` (previous run still going); the running one records itself.
3. Otherwise each due occurrence in order (``next_run`` and on, each delayed by the
   job's jitter) ends as ``skipped`` (paused, budget exhausted), ``missed`` (later
   than `cron.grace_seconds`, so the scheduler was down, and the catch-up policy
   says not to run it) or is run under the lock and recorded ``ok`` / ``failed`` /
   ``blocked``. ``next_run`` moves only in the transaction that wrote the record.

After a record: results and blocked notices go to the job's target, and the
failure-streak bookkeeping (`herald.cron.streaks`) sends at most one "failing"
notice per incident and one "recovered" notice.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from herald.cron.execute import DELIVERY_REFUSED, execute_job
from herald.cron.jobs import job_schedule
from herald.cron.store import CronStore, Job, NewRun, RunKind, RunRecord, new_holder
from herald.cron.streaks import after_record
from herald.cron.targets import deliver

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.tools import ToolRegistry

log = logging.getLogger("herald.cron")

MAX_RECORDS_PER_TICK = 1000  # a job down for years is caught up over several ticks


@dataclass
class TickReport:
    records: list[RunRecord] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.records if r.status == status)


def jitter_for(job: Job, scheduled_for: float) -> float:
    """A stable pseudo-random delay in [0, jitter_seconds) for this occurrence."""
    if job.jitter_seconds <= 0:
        return 0.0
    digest = hashlib.sha256(f"{job.name}:{scheduled_for}".encode()).digest()
    return (int.from_bytes(digest[:4], "big") / 2**32) * job.jitter_seconds


class Scheduler:
    def __init__(
        self, settings: Settings, store: CronStore, *, tools: ToolRegistry, kind: str = "tick"
    ) -> None:
        """`tools`: the registry the jobs' agents use, composed by the surface that runs
        the scheduler (herald.toolbox); cron does not pick its own."""
        self.settings = settings
        self.tools = tools
        self.store = store
        self.kind = kind
        self.holder = new_holder()
        self.config = settings.config.cron
        self.cancel = threading.Event()  # set when the process stops: running turns end

    # ---- the tick -------------------------------------------------------------------------

    def tick(self, now: datetime | None = None) -> TickReport:
        now = (now or datetime.now(UTC)).astimezone(UTC)
        report = TickReport()
        try:
            from herald.cron.builtin import sync_builtin_jobs

            sync_builtin_jobs(self.settings, self.store, now)  # backup.schedule -> herald-backup
        except Exception:
            log.exception("cron: could not schedule the built-in jobs")
        for job in self.store.jobs():
            if self.cancel.is_set():
                break
            try:
                self._tick_job(job, now, report)
            except Exception:  # one broken job must not stop the others
                log.exception("cron job %s: the scheduler could not handle it", job.name)
        return report

    def _tick_job(self, job: Job, now: datetime, report: TickReport) -> None:
        self._recover_crashed(job, report)
        job = self.store.job_by_id(job.id) or job
        lock = self.store.lock_of(job.id)
        schedule = job_schedule(job)
        stamp = now.timestamp()
        budget = MAX_RECORDS_PER_TICK
        cursor = job.next_run
        while cursor is not None and budget > 0:
            if cursor + jitter_for(job, cursor) > stamp:
                return  # not due yet
            budget -= 1
            following = schedule.next_after(datetime.fromtimestamp(cursor, UTC))
            nxt = following.timestamp() if following else None
            if lock is not None:
                if not (lock.kind == "scheduled" and cursor <= lock.scheduled_for):
                    # that run records its own occurrence; later ones cannot start meanwhile
                    self._record(job, cursor, NewRun("skipped", reason="previous_running",
                                 error="the previous run was still going"), nxt, report)  # fmt: skip
                cursor = nxt
                continue
            self._occurrence(job, cursor, nxt, stamp, report)
            fresh = self.store.job_by_id(job.id)
            if fresh is None or fresh.next_run == cursor:
                return  # removed, or another scheduler holds this occurrence
            job, cursor = fresh, fresh.next_run
            lock = self.store.lock_of(job.id)

    def _occurrence(
        self, job: Job, occurrence: float, nxt: float | None, now: float, report: TickReport
    ) -> None:
        if not job.enabled:
            self._record(job, occurrence, NewRun("skipped", reason="paused"), nxt, report)
            return
        late = now - (occurrence + jitter_for(job, occurrence)) > self.config.grace_seconds
        if late:
            last_due = nxt is None or nxt > now
            runs = job.catch_up == "all" or (job.catch_up == "once" and last_due)
            if not runs:
                why = "the scheduler was not running at that time"
                self._record(job, occurrence, NewRun("missed", reason=f"catch_up={job.catch_up}",
                             error=why), nxt, report)  # fmt: skip
                return
        if job.budget_tokens and self.store.tokens_since(job.id, time.time() - 86400) >= (
            job.budget_tokens
        ):
            self._record(job, occurrence, NewRun("skipped", reason="budget_exhausted",
                         error=f"the job used its {job.budget_tokens} tokens for the last 24 h"),
                         nxt, report)  # fmt: skip
            return
        self.run_occurrence(job, "scheduled", occurrence, nxt, report, late=late)

    # ---- running under the lock -----------------------------------------------------------

    def run_occurrence(
        self, job: Job, kind: RunKind, occurrence: float, nxt: float | None,
        report: TickReport, *, late: bool = False,
    ) -> RunRecord | None:  # fmt: skip
        ttl = self.config.lock_ttl_seconds
        if not self.store.take_lock(job, kind, occurrence, holder=self.holder, ttl=ttl):
            return None
        stop = threading.Event()
        refresher = threading.Thread(
            target=self._refresh, args=(job.id, ttl, stop), daemon=True, name="cron-lock"
        )
        refresher.start()
        try:
            outcome = execute_job(
                self.settings, job, scheduled_for=occurrence, tools=self.tools, cancel=self.cancel
            )
        except BaseException:
            stop.set()
            self.store.drop_lock(job.id, self.holder)
            raise
        finally:
            stop.set()
        outcome.late = late
        return self._record(job, occurrence, outcome, nxt, report, kind=kind, holder=self.holder)

    def _refresh(self, job_id: int, ttl: float, stop: threading.Event) -> None:
        while not stop.wait(max(ttl / 3, 0.05)):
            try:
                self.store.refresh_lock(job_id, self.holder, ttl)
            except Exception as exc:
                log.warning("could not refresh the run lock of job %d: %s", job_id, exc)

    def _recover_crashed(self, job: Job, report: TickReport) -> None:
        lock = self.store.lock_of(job.id)
        if lock is None or not lock.is_stale(time.time()):
            return
        schedule = job_schedule(job)
        following = schedule.next_after(datetime.fromtimestamp(lock.scheduled_for, UTC))
        error = (
            f"the run crashed: its scheduler (pid {lock.pid} on {lock.host}) died or stopped "
            "refreshing the run lock"
        )
        log.warning("cron job %s: %s; recording it as failed", job.name, error)
        self._record(
            job, lock.scheduled_for, NewRun("failed", reason="crashed", error=error,
                                            started_at=lock.taken_at),
            following.timestamp() if following else None, report, kind=lock.kind,  # type: ignore[arg-type]
            holder=lock.holder,
        )  # fmt: skip

    # ---- recording and telling the owner --------------------------------------------------

    def _record(
        self, job: Job, occurrence: float, run: NewRun, nxt: float | None, report: TickReport,
        *, kind: RunKind = "scheduled", holder: str | None = None,
    ) -> RunRecord | None:  # fmt: skip
        record = self.store.record_run(
            job, kind, occurrence, run, recorded_by=f"{self.kind}:{self.holder}",
            next_run=nxt, release_holder=holder,
        )  # fmt: skip
        if record is None:
            return None
        report.records.append(record)
        log.info("cron job %s: %s %s (%s)", job.name, _when(occurrence), record.status,
                 record.reason or "")  # fmt: skip
        self._tell(job, record)
        return record

    def _tell(self, job: Job, record: RunRecord) -> None:
        home = self.settings.home
        try:
            if record.status == "ok" and record.output:
                deliver(self.store, home, job_name=job.name, target_text=job.deliver,
                        what="result", text=record.output, run_id=record.id,
                        created_by=job.created_by, origin=job.origin,
                        config=self.settings.config)  # fmt: skip
            elif record.status == "blocked":
                text = (
                    f"Scheduled job '{job.name}' did not run ({_when(record.scheduled_for)}): "
                    f"it was blocked {_blocked_by(record)}. Check the job "
                    f"with `herald cron show {job.name}` and fix it with `herald cron edit`."
                )
                deliver(self.store, home, job_name=job.name, target_text=job.deliver,
                        what="blocked", text=text, run_id=record.id,
                        created_by=job.created_by, origin=job.origin,
                        config=self.settings.config)  # fmt: skip
            elif record.status == "failed":
                log.warning("cron job %s failed: %s", job.name, record.error)
            after_record(self.store, home, job, record, self.config.failure_notice_after)
        except Exception:
            log.exception("cron job %s: could not deliver the outcome of run %d", job.name,
                          record.id)  # fmt: skip

    # ---- by hand --------------------------------------------------------------------------

    def run_now(self, job: Job, now: datetime | None = None) -> RunRecord | None:
        """`herald cron run NAME`: one manual run, recorded like a scheduled one."""
        now = (now or datetime.now(UTC)).astimezone(UTC)
        report = TickReport()
        return self.run_occurrence(job, "manual", now.timestamp(), None, report)


def _blocked_by(record: RunRecord) -> str:
    if record.reason == DELIVERY_REFUSED:
        return f"because of its delivery target — {record.error}"
    return f"by the injection scanner — {record.reason}"


def _when(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="minutes")


__all__ = ["MAX_RECORDS_PER_TICK", "Scheduler", "TickReport", "jitter_for"]
