"""Jobs Herald schedules for itself from config: ``backup.schedule`` becomes the job
``herald-backup``, run by the same scheduler as every other job (one record per
occurrence, incidents, catch-up) but without a model: each run is
``herald backup create --keep N`` in a child process.

Only a job of that name made by the owner (``created_by='cli'``, which this sync and
`herald cron add` at a shell use; the model's jobs are ``tool``) runs as the built-in,
so a job the model schedules under the same name stays an ordinary prompt. The child
process is how cron reaches herald.homes without importing it (homes reads cron.db's
format, so the import would close a cycle).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING

from herald.cron.jobs import JobError, JobSpec, add_job, edit_job, set_enabled
from herald.cron.records import Job, NewRun

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.cron.store import CronStore

log = logging.getLogger("herald.cron")

BACKUP_JOB = "herald-backup"
_OWNER = "cli"
_PROMPT = "Back up this home (built in: herald backup create; set by backup.schedule)"


def sync_builtin_jobs(settings: Settings, store: CronStore, now: datetime | None = None) -> None:
    """Make ``herald-backup`` match ``backup.schedule`` (paused when it is unset)."""
    schedule = settings.config.backup.schedule
    job = store.job(BACKUP_JOB)
    if job is not None and job.created_by != _OWNER:
        if schedule is not None:  # someone else's job of that name: not ours to change
            log.warning("backup.schedule is set but the job %s was made by %s, not by Herald: "
                        "scheduled backups do not run until it is removed (herald cron remove %s)",
                        BACKUP_JOB, job.created_by, BACKUP_JOB)  # fmt: skip
        return
    if schedule is None:
        if job is not None and job.enabled:
            set_enabled(store, BACKUP_JOB, False)
        return
    spec = JobSpec(schedule=schedule, prompt=_PROMPT, deliver="log")
    try:
        if job is None:
            add_job(settings, store, BACKUP_JOB, spec, now=now, created_by=_OWNER)
        elif job.schedule_text != schedule or not job.enabled:
            edit_job(settings, store, BACKUP_JOB, spec, now=now, by_owner=True)
            set_enabled(store, BACKUP_JOB, True)
    except JobError as exc:
        raise JobError(f"backup.schedule: {exc}") from exc


def run_builtin(settings: Settings, job: Job) -> NewRun | None:
    """The record of a built-in job's run, or None for an ordinary job."""
    if job.name != BACKUP_JOB or job.created_by != _OWNER:
        return None
    started = time.time()
    env = dict(os.environ)
    root = settings.home.root
    args = [sys.executable, "-m", "herald"]
    if settings.home.profile:
        env["HERALD_HOME"] = str(root.parent.parent)
        args += ["--profile", settings.home.profile]
    else:
        env["HERALD_HOME"] = str(root)
    args += ["backup", "create", "--keep", str(settings.config.backup.keep)]
    try:
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=3600,
                              stdin=subprocess.DEVNULL)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return NewRun("failed", reason="backup_failed", error=str(exc), started_at=started)
    if done.returncode != 0:
        error = (done.stderr.strip().splitlines() or ["exit status " + str(done.returncode)])[-1]
        return NewRun("failed", reason="backup_failed", error=error, started_at=started)
    return NewRun("ok", output=done.stdout.strip() + "\n" + done.stderr.strip(), started_at=started)
