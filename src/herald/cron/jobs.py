"""Creating and changing jobs, with every check a user needs to hear about at once:
the schedule parses, a one-shot is in the future, the prompt passes the strict
injection scan, the skills exist and pass theirs, the script exists, the target
and the catch-up policy are valid. Used by the CLI and by the ``cronjob`` tool."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.cron.confine import CREATED_BY, OWNER, delivery_refusal
from herald.cron.prompt import check_prompt, check_skill_text, skill_unavailable, strip_invisible
from herald.cron.schedule import Schedule, ScheduleError, local_zone_name, parse_schedule
from herald.cron.store import CronStore, Job
from herald.cron.targets import TargetError, parse_target

if TYPE_CHECKING:
    from herald.config import Settings

CATCH_UP = ("skip", "once", "all")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_EPOCH = datetime(1970, 1, 2, tzinfo=UTC)


class JobError(ValueError):
    """A job that cannot be created or changed as asked (the message says how to fix it)."""


@dataclass
class JobSpec:
    """What the user asked for; None means "the default" (on add) or "unchanged" (on edit)."""

    schedule: str | None = None
    prompt: str | None = None
    deliver: str | None = None
    skills: list[str] | None = None
    allow: list[str] | None = None  # approvals.always_allow patterns for this job's runs
    script: str | None = None
    catch_up: str | None = None
    tz: str | None = None
    toolset: str | None = None
    model: str | None = None
    max_turns: int | None = None
    budget_tokens: int | None = None
    jitter_seconds: int | None = None


def job_schedule(job: Job) -> Schedule:
    """The stored (normalized) schedule of a job; never "already past"."""
    return parse_schedule(job.schedule, tz=job.tz, now=_EPOCH)


def add_job(
    settings: Settings, store: CronStore, name: str, spec: JobSpec, *, now: datetime | None = None,
    enabled: bool = True, created_by: str = "unknown", origin: str | None = None,
) -> Job:  # fmt: skip
    """Validate and store a job (see `build_job`)."""
    job = build_job(settings, store, name, spec, now=now, enabled=enabled,
                    created_by=created_by, origin=origin)  # fmt: skip
    try:
        return store.add_job(job)
    except ValueError as exc:
        raise JobError(str(exc)) from exc


def build_job(
    settings: Settings, store: CronStore, name: str, spec: JobSpec, *, now: datetime | None = None,
    enabled: bool = True, created_by: str = "unknown", origin: str | None = None,
) -> Job:  # fmt: skip
    """Validate a job without storing it. `created_by` is who asks: ``cli`` (the owner, who may
    deliver anywhere the write gate allows), ``tool`` (the model, from chat `origin`) or
    ``unknown``; the last two are confined (`herald.cron.confine`)."""
    now = now or datetime.now(UTC)
    if created_by not in CREATED_BY:
        raise JobError(f"unknown job creator {created_by!r}")
    if not _NAME_RE.match(name or ""):
        raise JobError(
            f"job name {name!r} is not usable: letters, digits, '.', '_' and '-', "
            "starting with a letter or digit, e.g. 'morning-brief'"
        )
    if store.job(name) is not None:
        raise JobError(
            f"a job named {name!r} already exists: edit it with `herald cron edit {name}`"
        )
    if not spec.schedule:
        raise JobError("a job needs a schedule, e.g. --schedule '0 9 * * 1-5' or 'every 2h'")
    if not (spec.prompt or "").strip():
        raise JobError("a job needs a prompt: what should the agent do when it runs?")
    cron = settings.config.cron
    tz = spec.tz or cron.timezone or local_zone_name()
    values = _validated(settings, spec, tz=tz, now=now, name=name, created_by=created_by,
                        origin=origin)  # fmt: skip
    schedule: Schedule = values.pop("_schedule")
    first = schedule.next_after(now)
    job = Job(
        id=0,
        name=name,
        schedule=values["schedule"],
        schedule_text=spec.schedule,
        tz=tz,
        prompt=values["prompt"],
        skills=tuple(values.get("skills") or ()),
        allow=tuple(values.get("allow") or ()),
        script=values.get("script"),
        deliver=values.get("deliver") or cron.default_deliver,
        toolset=spec.toolset,
        model=spec.model,
        catch_up=values.get("catch_up") or cron.catch_up,
        max_turns=spec.max_turns,
        budget_tokens=spec.budget_tokens,
        jitter_seconds=spec.jitter_seconds or 0,
        enabled=enabled,
        next_run=first.timestamp() if first else None,
        created_by=created_by,
        origin=origin,
    )
    if job.deliver != values.get("deliver"):
        _check_target(settings, job.deliver, name=name, created_by=created_by, origin=origin)
    return job


def edit_job(
    settings: Settings, store: CronStore, name: str, spec: JobSpec, *, now: datetime | None = None,
    by_owner: bool = False,
) -> Job:  # fmt: skip
    """Change a job. `by_owner` (the CLI): a new target the owner chose makes the job
    the owner's (``created_by='cli'``), since the owner now vouches for where it goes."""
    now = now or datetime.now(UTC)
    job = require_job(store, name)
    tz = spec.tz or job.tz
    if spec.schedule is None and spec.tz is not None:
        spec.schedule = job.schedule_text if job_schedule(job).kind != "once" else job.schedule
    created_by = OWNER if by_owner and spec.deliver is not None else job.created_by
    values = _validated(settings, spec, tz=tz, now=now, name=name, created_by=created_by,
                        origin=job.origin)  # fmt: skip
    changes: dict[str, Any] = {}
    schedule = values.pop("_schedule", None)
    if schedule is not None:
        first = schedule.next_after(now)
        changes.update(schedule=values["schedule"], schedule_text=spec.schedule, tz=tz,
                       next_run=first.timestamp() if first else None)  # fmt: skip
    for key in ("prompt", "deliver", "skills", "allow", "script", "catch_up"):
        if key in values:
            changes[key] = values[key]
    for key in ("toolset", "model", "max_turns", "budget_tokens", "jitter_seconds"):
        value = getattr(spec, key)
        if value is not None:
            changes[key] = value
    if not changes:
        raise JobError("nothing to change: give at least one option, e.g. --prompt or --schedule")
    if created_by != job.created_by:
        changes["created_by"] = created_by
    return store.update_job(job.id, **changes)


def set_enabled(store: CronStore, name: str, enabled: bool) -> Job:
    job = require_job(store, name)
    return store.update_job(job.id, enabled=enabled)


def remove_job(store: CronStore, name: str) -> Job:
    job = require_job(store, name)
    store.remove_job(job.id)
    return job


def require_job(store: CronStore, name: str) -> Job:
    job = store.job(name)
    if job is None:
        known = ", ".join(j.name for j in store.jobs()) or "none yet"
        raise JobError(f"no job named {name!r} (jobs: {known}); see `herald cron list`")
    return job


def _validated(
    settings: Settings, spec: JobSpec, *, tz: str, now: datetime, name: str, created_by: str,
    origin: str | None,
) -> dict[str, Any]:  # fmt: skip
    out: dict[str, Any] = {}
    if spec.schedule is not None:
        try:
            schedule = parse_schedule(spec.schedule, tz=tz, now=now)
        except ScheduleError as exc:
            raise JobError(str(exc)) from exc
        out["_schedule"] = schedule
        out["schedule"] = (
            schedule.at.isoformat() if schedule.kind == "once" and schedule.at else spec.schedule
        )
    if spec.prompt is not None:
        reason = check_prompt(spec.prompt)
        if reason is not None:
            raise JobError(
                f"the prompt was refused by the injection scanner ({reason}); rewrite it "
                "without instructions to override rules, hide things or send data away"
            )
        out["prompt"] = spec.prompt
    if spec.skills is not None:
        from herald.skills import SkillLibrary

        library = SkillLibrary(settings.home, settings.config)
        for skill_name in spec.skills:
            skill = library.get(skill_name)
            if skill is None:
                raise JobError(skill_unavailable(library, skill_name))
            problem = check_skill_text(skill_name, strip_invisible(skill.body))
            if problem is not None:
                raise JobError(f"{problem}; a job cannot load it")
        out["skills"] = list(spec.skills)
    if spec.allow is not None:
        for pattern in spec.allow:
            if not pattern.strip():
                raise JobError("an --allow pattern is empty: give a command glob, e.g. 'make test'")
        out["allow"] = [p.strip() for p in spec.allow]
    if spec.script is not None:
        path = Path(spec.script).expanduser().resolve() if spec.script else None
        if path is not None and not path.is_file():
            raise JobError(f"the pre-run script {path} does not exist")
        out["script"] = str(path) if path else None
    if spec.deliver is not None:
        _check_target(settings, spec.deliver, name=name, created_by=created_by, origin=origin)
        out["deliver"] = spec.deliver
    if spec.catch_up is not None:
        if spec.catch_up not in CATCH_UP:
            raise JobError(
                f"unknown catch-up policy {spec.catch_up!r}: skip (record missed runs only), "
                "once (run the latest missed one late) or all (run each missed one)"
            )
        out["catch_up"] = spec.catch_up
    for key in ("max_turns", "budget_tokens", "jitter_seconds"):
        value = getattr(spec, key)
        if value is not None and value < 0:
            raise JobError(f"{key.replace('_', '-')} cannot be negative (got {value})")
    return out


def _check_target(
    settings: Settings, text: str, *, name: str, created_by: str, origin: str | None
) -> None:
    try:
        target = parse_target(text, settings.home)
    except TargetError as exc:
        raise JobError(str(exc)) from exc
    refusal = delivery_refusal(target, text, settings.home, job_name=name,
                               created_by=created_by, origin=origin)  # fmt: skip
    if refusal is not None:
        raise JobError(refusal)


__all__ = [
    "CATCH_UP",
    "JobError",
    "JobSpec",
    "add_job",
    "build_job",
    "edit_job",
    "job_schedule",
    "remove_job",
    "require_job",
    "set_enabled",
]
