"""`herald cron add|list|show|edit|pause|resume|remove|run|runs|tick|daemon`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from herald.cli.common import fail, load, write_stdout

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.cron.store import CronStore, Job, RunRecord

app = typer.Typer(
    help="Scheduled jobs: prompts the agent runs unattended (results go to a chat, a file "
    "or the log).",
    no_args_is_help=True,
)

ScheduleOpt = Annotated[
    str | None,
    typer.Option(
        "--schedule", "-s",
        help="'0 9 * * 1-5', '@daily', 'every 2h', '30m', '2026-12-24T08:00', 'tomorrow 08:00', "
        "'in 20m'",
    ),
]  # fmt: skip
PromptOpt = Annotated[str | None, typer.Option("--prompt", "-P", help="what the agent should do")]
DeliverOpt = Annotated[
    str | None,
    typer.Option(help="log (default), file:PATH or PLATFORM:CHAT (e.g. telegram:123456789)"),
]
SkillOpt = Annotated[
    list[str] | None, typer.Option("--skill", help="load this skill into the prompt (repeatable)")
]
AllowOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow",
        help="a command pattern (glob, e.g. 'curl *') this job may run unattended beyond "
        "the known read-only commands (repeatable; on edit it replaces the job's list)",
    ),
]
ScriptOpt = Annotated[
    str | None, typer.Option(help="run this script first; its stdout is given to the agent")
]
CatchUpOpt = Annotated[
    str | None,
    typer.Option("--catch-up", help="after downtime: skip | once (run the latest late) | all"),
]
TzOpt = Annotated[str | None, typer.Option("--tz", help="IANA time zone, e.g. Europe/Berlin")]
ToolsetOpt = Annotated[str | None, typer.Option(help="toolset bundle (default herald-cron)")]
ModelOpt = Annotated[str | None, typer.Option(help="model name for this job")]
TurnsOpt = Annotated[
    int | None, typer.Option("--max-iterations", "--max-turns", help="model calls per run")
]
BudgetOpt = Annotated[
    int | None, typer.Option("--budget-tokens", help="tokens this job may use per 24 h")
]
JitterOpt = Annotated[
    int | None, typer.Option("--jitter", help="random delay of up to this many seconds")
]
AtOpt = Annotated[
    str | None,
    typer.Option("--at", help="act as if it were this ISO 8601 time (tests, replays)"),
]


def _settings_store(ctx: typer.Context) -> tuple[Settings, CronStore]:
    from herald.cron.store import CronStore, CronStoreError

    settings = load(ctx)
    try:
        return settings, CronStore.for_home(settings.home)
    except CronStoreError as exc:
        fail(str(exc))


def _at(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        fail(f"--at {text!r} is not an ISO 8601 time: use e.g. 2026-12-01T09:00:00+00:00")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _when(stamp: float | None, tz: str = "UTC") -> str:
    if stamp is None:
        return "-"
    from herald.cron.schedule import resolve_zone

    return datetime.fromtimestamp(stamp, resolve_zone(tz)).isoformat(timespec="minutes")


def _job_lines(job: Job) -> list[str]:
    from herald.cron.jobs import job_schedule

    lines = [
        f"name: {job.name}",
        f"schedule: {job.schedule_text} — {job_schedule(job).describe()}",
        f"time zone: {job.tz}",
        f"state: {'active' if job.enabled else 'paused'}",
        f"next run: {_when(job.next_run, job.tz)}",
        f"deliver to: {job.deliver}",
        f"catch-up: {job.catch_up}",
    ]
    for label, value in (
        ("skills", ", ".join(job.skills)), ("allowed commands", ", ".join(job.allow)),
        ("script", job.script), ("toolset", job.toolset),
        ("model", job.model), ("max iterations", job.max_turns), ("budget tokens/24h", job.budget_tokens),
        ("jitter seconds", job.jitter_seconds or None),
    ):  # fmt: skip
        if value:
            lines.append(f"{label}: {value}")
    lines.append(f"prompt: {job.prompt}")
    return lines


def _report_scheduler(store: CronStore) -> None:
    from herald.cli.common import err_console
    from herald.cron.daemon import scheduler_status

    status = scheduler_status(store)
    colour = "green" if status.running else "yellow"
    err_console().print(f"[{colour}]{status.message}[/{colour}]", highlight=False)


def _job_error(exc: Exception) -> None:
    fail(str(exc))


@app.command("add")
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="a unique name, e.g. morning-brief")],
    schedule: ScheduleOpt = None,
    prompt: PromptOpt = None,
    deliver: DeliverOpt = None,
    skill: SkillOpt = None,
    allow: AllowOpt = None,
    script: ScriptOpt = None,
    catch_up: CatchUpOpt = None,
    tz: TzOpt = None,
    toolset: ToolsetOpt = None,
    model: ModelOpt = None,
    max_turns: TurnsOpt = None,
    budget_tokens: BudgetOpt = None,
    jitter: JitterOpt = None,
    paused: Annotated[bool, typer.Option("--paused", help="create it paused")] = False,
    at: AtOpt = None,
) -> None:
    """Create a job."""
    _save(ctx, name, locals(), create=True, paused=paused)


@app.command("edit")
def edit(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the job to change")],
    schedule: ScheduleOpt = None,
    prompt: PromptOpt = None,
    deliver: DeliverOpt = None,
    skill: SkillOpt = None,
    allow: AllowOpt = None,
    script: ScriptOpt = None,
    catch_up: CatchUpOpt = None,
    tz: TzOpt = None,
    toolset: ToolsetOpt = None,
    model: ModelOpt = None,
    max_turns: TurnsOpt = None,
    budget_tokens: BudgetOpt = None,
    jitter: JitterOpt = None,
    at: AtOpt = None,
) -> None:
    """Change a job (only the options given)."""
    _save(ctx, name, locals(), create=False)


def _save(
    ctx: typer.Context, name: str, options: dict[str, Any], *, create: bool, paused: bool = False
) -> None:
    """`add` and `edit`: the same options, a new job or a change of one."""
    from herald.cron.jobs import JobError, JobSpec, add_job, edit_job

    fields = ("schedule", "prompt", "deliver", "allow", "script", "catch_up", "tz", "toolset", "model",
              "max_turns", "budget_tokens")  # fmt: skip
    spec = JobSpec(
        **{f: options[f] for f in fields},
        skills=options["skill"],
        jitter_seconds=options["jitter"],
    )
    settings, store = _settings_store(ctx)
    with store:
        try:
            if create:
                job = add_job(settings, store, name, spec, now=_at(options["at"]), created_by="cli",
                              enabled=not paused)  # fmt: skip
            else:
                job = edit_job(settings, store, name, spec, now=_at(options["at"]), by_owner=True)
        except JobError as exc:
            _job_error(exc)
        verb = "added" if create else "changed"
        write_stdout(f"{verb} job {job.name}: next run {_when(job.next_run, job.tz)}\n")
        if create:
            _report_scheduler(store)


@app.command("list")
def list_jobs(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Every job with its state, next run and last outcome."""
    _settings, store = _settings_store(ctx)
    with store:
        jobs = store.jobs()
        last = {j.name: (store.runs(j.name, limit=1) or [None])[0] for j in jobs}
        if as_json:
            from herald.cron.daemon import scheduler_status

            status = scheduler_status(store)
            data = {
                "scheduler": {"running": status.running, "message": status.message},
                "jobs": [
                    {**j.to_dict(), "last_run": r.to_dict() if (r := last[j.name]) else None}
                    for j in jobs
                ],
            }
            write_stdout(json.dumps(data, indent=2) + "\n")
            return
        if not jobs:
            write_stdout(
                "no jobs yet; add one with: herald cron add NAME --schedule S --prompt P\n"
            )
        else:
            from herald.cli.tables import Column, print_table

            columns = [Column("job"), Column("state"), Column("schedule"), Column("next run"),
                       Column("last run"), Column("delivers to", flex=True)]  # fmt: skip
            rows = []
            for job in jobs:
                run = last[job.name]
                state = "active" if job.enabled else "paused"
                outcome = f"{run.status} {_when(run.scheduled_for, job.tz)}" if run else "never"
                rows.append((job.name, state, job.schedule_text, _when(job.next_run, job.tz),
                             outcome, job.deliver))  # fmt: skip
            print_table(columns, rows)
        _report_scheduler(store)


@app.command("show")
def show(ctx: typer.Context, name: Annotated[str, typer.Argument()]) -> None:
    """A job's settings, its recent runs and its deliveries."""
    from herald.cron.jobs import JobError, require_job

    _settings, store = _settings_store(ctx)
    with store:
        try:
            job = require_job(store, name)
        except JobError as exc:
            _job_error(exc)
        write_stdout("\n".join(_job_lines(job)) + "\n\nrecent runs:\n")
        for run in store.runs(job.name, limit=5):
            write_stdout(_run_line(run, job.tz) + "\n")
        queued = store.outbox(status="queued", job_name=job.name)
        if queued:
            write_stdout(f"\n{len(queued)} message(s) queued for {job.deliver} (no gateway yet)\n")
        incident = store.open_incident(job.id)
        if incident:
            write_stdout(f"\nfailing: {incident.failures} in a row, last: {incident.last_error}\n")


def _set_enabled(ctx: typer.Context, name: str, enabled: bool) -> None:
    from herald.cron.jobs import JobError, set_enabled

    _settings, store = _settings_store(ctx)
    with store:
        try:
            job = set_enabled(store, name, enabled)
        except JobError as exc:
            _job_error(exc)
        word = "resumed" if enabled else "paused (its occurrences are recorded as skipped)"
        write_stdout(f"job {job.name} {word}\n")


@app.command("pause")
def pause(ctx: typer.Context, name: Annotated[str, typer.Argument()]) -> None:
    """Stop running a job (each occurrence is recorded as skipped)."""
    _set_enabled(ctx, name, False)


@app.command("resume")
def resume(ctx: typer.Context, name: Annotated[str, typer.Argument()]) -> None:
    """Run a paused job again."""
    _set_enabled(ctx, name, True)


@app.command("remove")
def remove(ctx: typer.Context, name: Annotated[str, typer.Argument()]) -> None:
    """Delete a job (its run history stays)."""
    from herald.cron.jobs import JobError, remove_job

    _settings, store = _settings_store(ctx)
    with store:
        try:
            remove_job(store, name)
        except JobError as exc:
            _job_error(exc)
        write_stdout(f"removed job {name}; its run history stays (herald cron runs {name})\n")


@app.command("run")
def run(ctx: typer.Context, name: Annotated[str, typer.Argument()], at: AtOpt = None) -> None:
    """Run a job now (recorded like a scheduled run)."""
    from herald.cron.jobs import JobError, require_job
    from herald.cron.scheduler import Scheduler
    from herald.toolbox import builtin_tools

    settings, store = _settings_store(ctx)
    with store:
        try:
            job = require_job(store, name)
        except JobError as exc:
            _job_error(exc)
        record = Scheduler(settings, store, tools=builtin_tools(), kind="manual").run_now(
            job, _at(at)
        )
        if record is None:
            fail(f"job {name} is running right now (its run lock is held); try again later", 1)
        write_stdout(_run_line(record, job.tz) + "\n")
        if record.output and record.status == "ok":
            write_stdout(record.output.rstrip() + "\n")
        if record.status != "ok":
            raise typer.Exit(1)


def _run_line(run: RunRecord, tz: str) -> str:
    detail = run.error or run.reason or ""
    late = " (late)" if run.late else ""
    manual = " [manual]" if run.kind == "manual" else ""
    return (
        f"#{run.id:<5} {_when(run.scheduled_for, tz):<23} {run.status:<8}{late}{manual}"
        f" {detail[:100]}" + (f"  session {run.session_id}" if run.session_id else "")
    )


@app.command("runs")
def runs(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument()],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """A job's run history, oldest first."""
    _settings, store = _settings_store(ctx)
    with store:
        records = store.runs(name, limit=limit)
        job = store.job(name)
        if not records and job is None:
            fail(f"no job named {name!r} and no runs recorded for one; see `herald cron list`")
        if as_json:
            write_stdout(json.dumps([r.to_dict() for r in records], indent=2) + "\n")
            return
        for record in records:
            write_stdout(_run_line(record, job.tz if job else "UTC") + "\n")


@app.command("tick")
def tick(ctx: typer.Context, at: AtOpt = None) -> None:
    """Run every due job once as of now (or --at), then exit: for system cron / timers."""
    from herald.cron.scheduler import Scheduler
    from herald.toolbox import builtin_tools

    settings, store = _settings_store(ctx)
    with store:
        report = Scheduler(settings, store, tools=builtin_tools(), kind="tick").tick(_at(at))
        for record in report.records:
            write_stdout(f"{record.job_name}: " + _run_line(record, "UTC") + "\n")
        if not report.records:
            write_stdout("nothing was due\n")


@app.command("daemon")
def daemon(
    ctx: typer.Context,
    interval: Annotated[
        float | None, typer.Option(help="seconds between ticks (default cron.tick_seconds)")
    ] = None,
) -> None:
    """Run the scheduler in the foreground until Ctrl-C / SIGTERM (without a gateway)."""
    import signal
    import threading

    from herald.cron.daemon import run_daemon
    from herald.toolbox import builtin_tools

    settings = load(ctx)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    write_stdout(f"cron scheduler running for {settings.home.root}; Ctrl-C stops it\n")
    run_daemon(settings, stop=stop, tools=builtin_tools(), interval=interval)
