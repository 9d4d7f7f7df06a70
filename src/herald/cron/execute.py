"""Running one occurrence of a job: assemble and scan the prompt, then one unattended
turn in a session of its own (source ``cron``), with the job's toolset, model and
iteration budget. No `Humans` are passed, so approvals follow the unattended policy:
known read-only commands run, plus the job's own ``--allow`` patterns and
``approvals.unattended_allow``; everything else is refused with the ``herald cron edit
JOB --allow`` line that would allow it (``approvals.unattended: {cron: allow}`` is the
dangerous opt-out)."""

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
from herald.tools.terminal_approval import UNATTENDED_REFUSAL

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.cron.store import Job
    from herald.tools import ToolRegistry

log = logging.getLogger("herald.cron")

# The reason of a run recorded `blocked` because the job may not deliver where it says.
DELIVERY_REFUSED = "delivery_refused"


def job_settings(settings: Settings, job: Job) -> Settings:
    """The settings of one run: the job's model. (Its ``--allow`` patterns travel in
    `job_options`, to this job's runs only.)"""
    if not job.model:
        return settings
    config = copy.deepcopy(settings.config)
    config.model.name = job.model
    return replace(settings, config=config)


def allow_hint(job: Job) -> str:
    """How the owner allows one more command for this job (the refusal quotes it)."""
    return f"`herald cron edit {job.name} --allow {{pattern}}`"


def refusal_note(refused: list[str]) -> str:
    """What the run record and the delivered result say about commands the unattended
    policy refused (Herald's words, not the model's), each with how to allow it."""
    if not refused:
        return ""
    lines = "\n".join(f"- {line}" for line in dict.fromkeys(refused))
    return f"\n\n[Herald] Commands refused in this unattended run:\n{lines}"


def _refusal_line(result: str) -> str | None:
    start = result.find(UNATTENDED_REFUSAL)
    if start < 0:
        return None
    line = result[start:]
    cut = line.find(" Do not retry")  # the advice to the model is not for the owner
    return line[:cut] if cut > 0 else line


def _delivery_refusal(settings: Settings, job: Job) -> str | None:
    try:
        target = parse_target(job.deliver, settings.home)
    except TargetError:
        return None  # a malformed target falls back to the log at delivery, as before
    return delivery_refusal(target, job.deliver, settings.home, job_name=job.name,
                            created_by=job.created_by, origin=job.origin)  # fmt: skip


def execute_job(
    settings: Settings,
    job: Job,
    *,
    scheduled_for: float,
    tools: ToolRegistry,
    cancel: threading.Event | None = None,
) -> NewRun:
    """Run one occurrence with `tools` (the registry of the surface running the
    scheduler); `cancel` (the scheduler is stopping) interrupts the turn."""
    from herald.cron.builtin import run_builtin

    builtin = run_builtin(settings, job)  # herald-backup: no model, a child process
    if builtin is not None:
        return builtin
    started = time.time()
    refusal = _delivery_refusal(settings, job)
    if refusal is not None:  # nothing runs whose result could only go where it may not
        return NewRun("blocked", reason=DELIVERY_REFUSED, error=refusal, started_at=started)
    assembled = assemble_prompt(settings, job)
    if assembled.blocked:
        return NewRun("blocked", reason=assembled.reason, started_at=started)
    if assembled.script_failed:
        return NewRun("failed", reason="script_failed", error=assembled.reason, started_at=started)
    from herald.engine import Agent, AgentOptions, TurnCallbacks
    from herald.state import StateStore

    refused: list[str] = []

    def on_tool_end(_name: str, result: str, is_error: bool) -> None:
        line = _refusal_line(result) if is_error else None
        if line is not None:
            refused.append(line)

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
        # the job's own --allow patterns: what it may run beyond the read-only commands
        unattended_allow=tuple(job.allow),
        unattended_hint=allow_hint(job),
    )
    try:
        with StateStore(settings.home.state_db) as store:
            agent = Agent.open(
                job_settings(settings, job), store, source="cron", tools=tools, options=options
            )
            try:
                handle = agent.start_turn(  # no humans: unattended
                    assembled.text, callbacks=TurnCallbacks(on_tool_end=on_tool_end)
                )
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
    note = refusal_note(refused)
    if result.completed and (result.final_text or "").strip():
        return NewRun("ok", reason=reason, started_at=started, session_id=result.session_id,
                      output=result.final_text + note, tokens=tokens)  # fmt: skip
    error = result.error or (
        "the agent ended without an answer" if result.completed else f"the turn ended: {reason}"
    )
    return NewRun("failed", reason=reason, error=error, started_at=started,
                  session_id=result.session_id,
                  output=((result.final_text or "") + note).strip() or None,
                  tokens=tokens)  # fmt: skip


__all__ = ["DELIVERY_REFUSED", "allow_hint", "execute_job", "job_settings", "refusal_note"]
