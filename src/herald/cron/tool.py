"""The ``cronjob`` tool: the model creates, lists, pauses, resumes and removes scheduled
jobs for the user. Every answer carries ``scheduler``: whether anything is running
the jobs of this home right now, and if not, how to start it — a job is never
reported as "scheduled" without saying whether it will actually run.

The tool is in the ``cronjob`` toolset, which the interactive bundles include and
``herald-cron`` does not: a job cannot create jobs.

A job is a prompt that will run later with nobody watching, so what the model asks
for here is the owner's to allow: ``create``, ``resume`` and ``remove`` show the
whole job to the human through ``ctx.approve`` (the approval lifecycle of the
terminal) and happen only on a yes; in an unattended turn (no human) they are
refused. ``list``, ``show`` and ``pause`` need no approval: they only read, or stop
a job from running. A job made here is recorded as the model's (``created_by=tool``,
with the chat it came from) and may deliver only to the log, under ``cron/output``
or to that chat (`herald.cron.confine`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from herald.safety import ApprovalPrompt, redact
from herald.tools import ToolArgumentError, ToolContext, tool
from herald.tools.consequence import actions
from herald.tools.terminal_approval import ask_human

Action = Literal["create", "list", "show", "pause", "resume", "remove"]
_NEEDS_OWNER = ("create", "resume", "remove")
_YES = ("once", "session", "always")


def _describe(job: dict[str, Any]) -> str:
    """The whole job as the human sees it before saying yes."""
    zone = job.get("timezone") or "config timezone"
    skills = ", ".join(job.get("skills") or ()) or "none"
    allow = ", ".join(job.get("allow") or ()) or "none"
    lines = [
        f"  schedule: {job.get('schedule')} ({zone})",
        f"  deliver:  {job.get('deliver')}",
        f"  skills:   {skills}",
        f"  allow:    {allow}",
        "  prompt:",
        *(f"    {line}" for line in str(job.get("prompt") or "").splitlines()),
    ]
    return "\n".join(lines)


def _owner_says_yes(ctx: ToolContext, action: str, name: str, job: dict[str, Any]) -> str | None:
    """None when the human approved; otherwise the refusal for the model."""
    if ctx.approve is None:
        verb = "add" if action == "create" else action
        return (
            f"cronjob {action} needs the owner's approval and nobody is here to give it "
            f"(an unattended turn: {ctx.surface}). Not done. The owner can do it at the CLI: "
            f"`herald cron {verb} {name}`."
        )
    prompt = ApprovalPrompt(
        command=redact(f"cronjob {action} {name}\n{_describe(job)}"),
        rule="cronjob",
        description=f"{action} a scheduled job: it runs this prompt unattended on its schedule",
        choices=("once", "deny"),
    )
    timeout = ctx.config.approvals.timeout_seconds if ctx.config is not None else 120.0
    answer = ask_human(ctx.approve, prompt, timeout, ctx.cancel)
    if answer in _YES:
        return None
    return (
        f"The user did not approve cronjob {action} {name} ({answer or 'no answer'}); "
        "nothing was changed. Do not retry it; ask the user what they want instead."
    )


def _when(stamp: float | None) -> str | None:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="minutes") if stamp else None


def _job_view(job: Any) -> dict[str, Any]:
    return {
        "name": job.name,
        "schedule": job.schedule_text,
        "timezone": job.tz,
        "state": "active" if job.enabled else "paused",
        "next_run_utc": _when(job.next_run),
        "deliver": job.deliver,
        "prompt": job.prompt,
        "skills": list(job.skills),
        "allow": list(job.allow),
        "created_by": job.created_by,
    }


@tool(
    toolset="cronjob",
    controls=("prompt", "deliver"),
    consequential=True,
    consequence=actions("create"),
)
def cronjob(
    ctx: ToolContext,
    action: Action,
    name: str = "",
    schedule: str = "",
    prompt: str = "",
    deliver: str = "",
    skills: list[str] | None = None,
    timezone: str = "",
) -> str:
    """Manage the user's scheduled jobs (prompts Herald runs unattended on a schedule).
    The answer says whether a scheduler is running; if none is, tell the user how to
    start one, because the job will not run until then.

    Args:
        action: create | list | show | pause | resume | remove
        name: the job's unique name (all actions except list), e.g. morning-brief
        schedule: for create: '0 9 * * 1-5', '@daily', 'every 2h', '30m', '2026-12-24T08:00', 'tomorrow 08:00' or 'in 20m'
        prompt: for create: what the agent should do at each run, self-contained
        deliver: for create: 'log' (default), 'file:NAME' (a file under the cron/output folder) or this chat as 'PLATFORM:CHAT' such as 'telegram:123456789'
        skills: for create: names of skills to load into the job's prompt
        timezone: for create: IANA zone for the schedule, e.g. Europe/Berlin (default: config)
    """
    from herald.config import Settings
    from herald.cron.confine import MODEL
    from herald.cron.daemon import scheduler_status
    from herald.cron.jobs import (
        JobError,
        JobSpec,
        build_job,
        remove_job,
        require_job,
        set_enabled,
    )
    from herald.cron.store import CronStore, CronStoreError

    if ctx.home is None or ctx.config is None:
        raise ToolArgumentError("cronjob needs a Herald home; this agent has none")
    if action != "list" and not name.strip():
        raise ToolArgumentError(f"action {action!r} needs the job's name")
    settings = Settings(home=ctx.home, config=ctx.config, secrets=ctx.secrets)  # type: ignore[arg-type]
    try:
        store = CronStore.for_home(ctx.home)
    except CronStoreError as exc:
        return json.dumps({"ok": False, "error": str(exc)})
    with store:
        status = scheduler_status(store)
        answer: dict[str, Any] = {"ok": True}
        try:
            pending = None
            if action == "create":  # validated (target confinement too) before anyone is asked
                spec = JobSpec(schedule=schedule or None, prompt=prompt or None,
                               deliver=deliver or None, skills=skills, tz=timezone or None)  # fmt: skip
                pending = build_job(settings, store, name.strip(), spec, created_by=MODEL,
                                    origin=ctx.origin)  # fmt: skip
            if action in _NEEDS_OWNER:
                shown = _job_view(pending or require_job(store, name))
                refusal = _owner_says_yes(ctx, action, name.strip(), shown)
                if refusal is not None:
                    answer = {"ok": False, "error": refusal}
                    answer["scheduler"] = {"running": status.running, "message": status.message}
                    return json.dumps(answer, ensure_ascii=False)
            if pending is not None:
                try:
                    job = store.add_job(pending)
                except ValueError as exc:
                    raise JobError(str(exc)) from exc
                answer["job"] = _job_view(job)
                answer["message"] = (
                    f"job {job.name} is stored; next run {_when(job.next_run)} UTC"
                    + ("" if status.running else " — but it will NOT run until a scheduler starts")
                )
            elif action == "list":
                answer["jobs"] = [_job_view(j) for j in store.jobs()]
            elif action == "show":
                job = require_job(store, name)
                answer["job"] = _job_view(job)
                answer["recent_runs"] = [
                    {
                        "scheduled_for_utc": _when(r.scheduled_for),
                        "status": r.status,
                        "detail": r.error or r.reason,
                    }
                    for r in store.runs(job.name, limit=5)
                ]
            elif action in ("pause", "resume"):
                job = set_enabled(store, name, action == "resume")
                answer["job"] = _job_view(job)
            elif action == "remove":
                job = remove_job(store, name)
                answer["message"] = f"job {job.name} removed; its run history is kept"
        except JobError as exc:
            answer = {"ok": False, "error": str(exc)}
        answer["scheduler"] = {"running": status.running, "message": status.message}
        return json.dumps(answer, ensure_ascii=False)


TOOLS = (cronjob,)

__all__ = ["TOOLS", "cronjob"]
