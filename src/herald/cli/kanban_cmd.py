"""`herald kanban …`: the task board from the terminal, the worker and the dispatcher."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from herald.cli.common import EXIT_TURN_FAILED, fail, load, write_stdout

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.kanban import Board, Task

app = typer.Typer(
    help="The task board: post tasks, watch workers claim and finish them, approve reviews.",
    no_args_is_help=True,
)
OWNER = "owner"
T = TypeVar("T")


@contextmanager
def _board(ctx: typer.Context) -> Iterator[Board]:
    from herald.kanban import KanbanError, open_board

    settings = load(ctx)
    try:
        board = open_board(settings.config, settings.home, settings.secrets)
    except KanbanError as exc:
        fail(str(exc))
    try:
        yield board
    except KanbanError as exc:
        fail(str(exc), code=EXIT_TURN_FAILED)
    finally:
        board.close()


def _echo_task(task: Task, verb: str) -> None:
    write_stdout(f"task #{task.id} {verb}: {task.title} [{task.status.value}]\n")


def _act(ctx: typer.Context, verb: str, fn: Callable[[Board], Task]) -> None:
    with _board(ctx) as board:
        _echo_task(fn(board), verb)


@app.command("add")
def add(
    ctx: typer.Context,
    title: Annotated[str, typer.Argument(help="what is to be done, in a few words")],
    body: Annotated[str, typer.Option("--body", "-b", help="details")] = "",
    priority: Annotated[int, typer.Option("--priority", "-P", help="higher runs first")] = 0,
    assignee: Annotated[str, typer.Option("--assignee", "-a", help="profile, or any")] = "any",
    parent: Annotated[int | None, typer.Option(help="parent task id")] = None,
    after: Annotated[
        list[int] | None, typer.Option("--after", help="a task that must be done first")
    ] = None,
) -> None:
    """Post a task."""
    from herald.kanban import NewTask

    new = NewTask(title, body, priority, assignee, parent, tuple(after or ()))
    _act(ctx, "added", lambda b: b.add(new, author=OWNER))


@app.command("list")
def list_tasks(
    ctx: typer.Context,
    status: Annotated[str | None, typer.Option(help="only this status")] = None,
    assignee: Annotated[str | None, typer.Option(help="only this assignee")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Tasks, most urgent first."""
    from herald.kanban import Status

    try:
        statuses = [Status(status)] if status else None
    except ValueError:
        fail(f"unknown status {status!r}; use one of {', '.join(s.value for s in Status)}")
    with _board(ctx) as board:
        tasks = board.list(statuses=statuses, assignee=assignee)
    if as_json:
        write_stdout(json.dumps([t.to_dict() for t in tasks], indent=1) + "\n")
        return
    if not tasks:
        write_stdout("no tasks\n")
        return
    from herald.cli.tables import Column, print_table

    rows = []
    for t in tasks:
        extra = f" @{t.assignee}" if t.assignee != "any" else ""
        waits = f" (after {', '.join(f'#{b}' for b in t.blocked_by)})" if t.blocked_by else ""
        rows.append((f"#{t.id}", t.status.value, f"p{t.priority}", f"{t.title}{extra}{waits}"))
    columns = [Column("task"), Column("status"), Column("prio"), Column("title", flex=True)]
    print_table(columns, rows)


@app.command("show")
def show(
    ctx: typer.Context,
    task_id: int,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """One task with its links, comments and attachments."""
    from rich.console import Console

    from herald.cli.kanban_view import task_detail

    with _board(ctx) as board:
        task = board.show(task_id)
    if as_json:
        write_stdout(json.dumps(task.to_dict(), indent=1) + "\n")
    else:
        Console(highlight=False).print(task_detail(task))


@app.command("board")
def board_view(ctx: typer.Context) -> None:
    """The board: a column per status."""
    from rich.console import Console

    from herald.cli.kanban_view import board_table, board_text

    with _board(ctx) as board:
        tasks = board.list()
    console = Console(highlight=False)
    if console.is_terminal:
        console.print(board_table(tasks))
    else:
        write_stdout(board_text(tasks))


@app.command("assign")
def assign(ctx: typer.Context, task_id: int, profile: str) -> None:
    """Give a task to a profile (or "any")."""
    _act(ctx, f"assigned to {profile}", lambda b: b.update(task_id, assignee=profile))


@app.command("comment")
def comment(ctx: typer.Context, task_id: int, text: str) -> None:
    """Add a comment to a task."""
    with _board(ctx) as board:
        board.comment(task_id, text, author=OWNER)
    write_stdout(f"commented on task #{task_id}\n")


@app.command("link")
def link(ctx: typer.Context, blocker: int, blocked: int) -> None:
    """BLOCKER blocks BLOCKED: BLOCKED waits until BLOCKER is done."""
    with _board(ctx) as board:
        board.link(blocker, blocked)
    write_stdout(f"task #{blocker} now blocks task #{blocked}\n")


_FORCE = typer.Option("--force", help="also when a worker holds the task (ends its lease)")


@app.command("block")
def block(
    ctx: typer.Context, task_id: int, reason: str, force: Annotated[bool, _FORCE] = False
) -> None:
    """Park a task until it is unblocked."""
    _act(ctx, "blocked", lambda b: b.block(task_id, reason, author=OWNER, override=force))


@app.command("unblock")
def unblock(
    ctx: typer.Context,
    task_id: int,
    note: Annotated[str, typer.Option(help="what changed")] = "",
) -> None:
    """Return a blocked task to todo."""
    _act(ctx, "unblocked", lambda b: b.unblock(task_id, author=OWNER, note=note))


@app.command("done")
def done(
    ctx: typer.Context,
    task_id: int,
    summary: Annotated[str, typer.Argument(help="the result")] = "done by the owner",
    force: Annotated[bool, _FORCE] = False,
) -> None:
    """Mark a task done."""
    _act(ctx, "done", lambda b: b.complete(task_id, summary, author=OWNER, override=force))


@app.command("approve")
def approve(
    ctx: typer.Context,
    task_id: int,
    note: Annotated[str, typer.Option(help="a comment with the approval")] = "",
) -> None:
    """Approve a task waiting in review: it is done."""
    _act(ctx, "approved", lambda b: b.approve(task_id, author=OWNER, note=note))


@app.command("reject")
def reject(ctx: typer.Context, task_id: int, reason: str) -> None:
    """Send a task in review back to todo with what to change."""
    _act(ctx, "sent back", lambda b: b.reject(task_id, reason, author=OWNER))


@app.command("work")
def work(
    ctx: typer.Context,
    task_id: int,
    lease: Annotated[str | None, typer.Option(help="the dispatcher's lease token")] = None,
) -> None:
    """Run one task as an unattended agent (the dispatcher starts these)."""
    from herald.kanban.dispatch import run_worker
    from herald.toolbox import builtin_tools

    settings = load(ctx)
    outcome = run_worker(settings, task_id, tools=builtin_tools(), lease_token=lease)
    write_stdout(outcome.message + "\n")
    raise typer.Exit(outcome.code)


@app.command("dispatch")
def dispatch(
    ctx: typer.Context,
    once: Annotated[
        bool, typer.Option("--once", help="one round, wait for its workers, then exit")
    ] = False,
) -> None:
    """Claim ready tasks and run them in workers, until Ctrl-C / SIGTERM."""
    settings = load(ctx)
    _run_dispatcher(settings, once=once)


def _run_dispatcher(settings: Settings, *, once: bool) -> None:
    import logging
    import signal
    import threading

    from herald.kanban import KanbanError
    from herald.kanban.dispatch import Dispatcher

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger = logging.getLogger("herald.kanban")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        dispatcher = Dispatcher(settings)
    except KanbanError as exc:
        fail(str(exc))
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        dispatcher.run(stop, once=once)
    finally:
        dispatcher.close()
        logger.removeHandler(handler)
