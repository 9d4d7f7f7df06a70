"""The ``cronjob`` tool: the model creates, lists, pauses, resumes and removes scheduled
jobs for the user. Every answer carries ``scheduler``: whether anything is running
the jobs of this home right now, and if not, how to start it — a job is never
reported as "scheduled" without saying whether it will actually run.

The tool is in the ``cronjob`` toolset, which the interactive bundles include and
``herald-cron`` does not: a job cannot create jobs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from herald.tools import ToolArgumentError, ToolContext, tool

Action = Literal["create", "list", "show", "pause", "resume", "remove"]


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
    }


@tool(toolset="cronjob")
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
        deliver: for create: 'log' (default), 'file:PATH' or 'PLATFORM:CHAT' such as 'telegram:123456789'
        skills: for create: names of skills to load into the job's prompt
        timezone: for create: IANA zone for the schedule, e.g. Europe/Berlin (default: config)
    """
    from herald.config import Settings
    from herald.cron.daemon import scheduler_status
    from herald.cron.jobs import (
        JobError,
        JobSpec,
        add_job,
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
            if action == "create":
                spec = JobSpec(schedule=schedule or None, prompt=prompt or None,
                               deliver=deliver or None, skills=skills, tz=timezone or None)  # fmt: skip
                job = add_job(settings, store, name.strip(), spec)
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
