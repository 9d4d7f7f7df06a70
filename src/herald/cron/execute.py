"""Running one occurrence of a job: assemble and scan the prompt, then one unattended
turn in a session of its own (source ``cron``), with the job's toolset, model and
iteration budget. No `Humans` are passed, so approvals follow the unattended policy
(``approvals.unattended.cron``, default deny)."""

from __future__ import annotations

import copy
import logging
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from herald.cron.confine import delivery_refusal
from herald.cron.prompt import assemble_prompt
from herald.cron.store import NewRun
from herald.cron.targets import TargetError, parse_target

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.cron.store import Job

log = logging.getLogger("herald.cron")

# The reason of a run recorded `blocked` because the job may not deliver where it says.
DELIVERY_REFUSED = "delivery_refused"


def job_settings(settings: Settings, job: Job) -> Settings:
    """The settings of one run: the job's model, and its own ``--allow`` command
    patterns added to ``approvals.always_allow`` (deny globs and hard-line refusals
    still win; everything else dangerous is denied: nobody is there to approve)."""
    if not job.model and not job.allow:
        return settings
    config = copy.deepcopy(settings.config)
    if job.model:
        config.model.name = job.model
    if job.allow:
        config.approvals.always_allow = [*config.approvals.always_allow, *job.allow]
    return replace(settings, config=config)


def _delivery_refusal(settings: Settings, job: Job) -> str | None:
    try:
        target = parse_target(job.deliver, settings.home)
    except TargetError:
        return None  # a malformed target falls back to the log at delivery, as before
    return delivery_refusal(target, job.deliver, settings.home, job_name=job.name,
                            created_by=job.created_by, origin=job.origin)  # fmt: skip


def execute_job(
    settings: Settings, job: Job, *, scheduled_for: float, cancel: threading.Event | None = None
) -> NewRun:
    """Run one occurrence; `cancel` (the scheduler is stopping) interrupts the turn."""
    started = time.time()
    refusal = _delivery_refusal(settings, job)
    if refusal is not None:  # nothing runs whose result could only go where it may not
        return NewRun("blocked", reason=DELIVERY_REFUSED, error=refusal, started_at=started)
    assembled = assemble_prompt(settings, job)
    if assembled.blocked:
        return NewRun("blocked", reason=assembled.reason, started_at=started)
    if assembled.script_failed:
        return NewRun("failed", reason="script_failed", error=assembled.reason, started_at=started)
    from herald.engine import Agent, AgentOptions
    from herald.state import StateStore

    cron = settings.config.cron
    cwd = Path(cron.cwd).expanduser() if cron.cwd else Path(settings.home.cron_dir) / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    max_turns = min(job.max_turns or cron.max_iterations, cron.max_iterations)
    options = AgentOptions(
        source="cron",
        platform="cron",
        cwd=str(cwd),
        toolset=job.toolset or cron.toolset,
        max_iterations=max_turns,
    )
    try:
        with StateStore(settings.home.state_db) as store:
            agent = Agent.from_settings(job_settings(settings, job), store, options=options)
            try:
                handle = agent.start_turn(assembled.text)  # no humans: unattended
                deadline = time.monotonic() + cron.run_timeout_seconds
                while not handle.wait(0.25):
                    if time.monotonic() > deadline or (cancel is not None and cancel.is_set()):
                        handle.interrupt()
                        break
                result = handle.result()
            finally:
                agent.close()
            when = datetime.fromtimestamp(scheduled_for, UTC).isoformat(timespec="seconds")
            try:
                store.update_session(
                    result.session_id,
                    title=f"cron: {job.name} @ {when}",
                    meta={"cron_job": job.name, "scheduled_for": when},
                )
            except Exception as exc:  # the link is a convenience; the run record has the id
                log.warning("could not label the session of cron job %s: %s", job.name, exc)
    except Exception as exc:
        log.exception("cron job %s could not run", job.name)
        return NewRun("failed", reason="error", error=f"{type(exc).__name__}: {exc}",
                      started_at=started)  # fmt: skip
    tokens = int(getattr(result.usage, "prompt_tokens", 0) or 0) + int(
        getattr(result.usage, "completion_tokens", 0) or 0
    )
    reason = result.exit_reason.value
    if result.completed and (result.final_text or "").strip():
        return NewRun("ok", reason=reason, started_at=started, session_id=result.session_id,
                      output=result.final_text, tokens=tokens)  # fmt: skip
    error = result.error or (
        "the agent ended without an answer" if result.completed else f"the turn ended: {reason}"
    )
    return NewRun("failed", reason=reason, error=error, started_at=started,
                  session_id=result.session_id, output=result.final_text or None,
                  tokens=tokens)  # fmt: skip


__all__ = ["DELIVERY_REFUSED", "execute_job", "job_settings"]
