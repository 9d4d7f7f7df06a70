"""The ``kanban_*`` tools: how an agent reads the board and how a worker reports.

A worker's session is recorded on the task it holds, so in a worker every tool
defaults to that task and acts with its lease; another agent (say the owner's
chat) can read the board, post tasks and comment, but cannot move a task some
worker holds. Results are JSON.

Authority: a tool moves only the task this session holds the lease on. Approving or
rejecting a task in review, unblocking a blocked task and moving any task without
its lease are the owner's (CLI, ``/kanban`` in the owner's chat, the web board): the
tools refuse them with the command the owner would use, and the board refuses them
again for any author that is not the owner (`herald.kanban.model.is_owner`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from herald.kanban.board import Board
from herald.kanban.model import HELD, KanbanError, NewTask, Status, Task, owner_only
from herald.kanban.open import open_board, sqlite_path
from herald.tools import ToolArgumentError, ToolContext, tool

TOOLSET = "kanban"
_boards: dict[tuple[str, str], Board] = {}
_boards_lock = threading.Lock()


def board_for(ctx: ToolContext) -> Board:
    """One open board per location and process (tools run many times per turn)."""
    if ctx.config is None or ctx.home is None:
        raise ToolArgumentError("the kanban tools need a Herald home and config")
    section = ctx.config.kanban
    where = section.dsn if section.backend == "postgres" else str(sqlite_path(ctx.config, ctx.home))
    key = (section.backend, f"{ctx.home.root}|{where}")
    with _boards_lock:
        board = _boards.get(key)
        if board is None:
            board = _boards[key] = open_board(ctx.config, ctx.home, ctx.secrets)
    return board


@contextmanager
def _board(ctx: ToolContext) -> Iterator[Board]:
    try:
        yield board_for(ctx)
    except KanbanError as exc:
        raise ToolArgumentError(str(exc)) from None


def _own_task(board: Board, ctx: ToolContext) -> Task | None:
    return board.task_for_session(ctx.session_id) if ctx.session_id else None


def _target(board: Board, ctx: ToolContext, task_id: int) -> tuple[int, str | None]:
    """The task to act on and the lease to act with (None: not this session's task)."""
    own = _own_task(board, ctx)
    if task_id <= 0:
        if own is None:
            raise ToolArgumentError(
                "this session is not working on a task: pass task_id (see kanban_list)"
            )
        return own.id, own.lease_token
    if own is not None and own.id == task_id:
        return task_id, own.lease_token
    return task_id, None


def _leased(board: Board, ctx: ToolContext, task_id: int) -> tuple[int, str | None]:
    """The task to move and this session's lease on it; refused (before any change)
    when this session does not hold it: only the owner moves other tasks. A task another
    worker holds is left to the board, which names that worker."""
    tid, token = _target(board, ctx, task_id)
    if token is None:
        status = board.show(tid).status
        if status not in HELD:
            raise owner_only(tid, status.value, _author(ctx))
    return tid, token


def _author(ctx: ToolContext) -> str:
    return f"agent:{ctx.session_id}" if ctx.session_id else "agent"


def _brief(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "title": task.title,
        "status": task.status.value,
        "priority": task.priority,
        "assignee": task.assignee,
        "attempts": task.attempts,
        "blocked_by": list(task.blocked_by),
    }


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


@tool(toolset=TOOLSET, parallel_safe=True)
def kanban_show(ctx: ToolContext, task_id: int = 0) -> str:
    """Show a task with its links, comments and attachments.

    Args:
        task_id: the task; 0 means the task this worker is working on
    """
    with _board(ctx) as board:
        tid, _ = _target(board, ctx, task_id)
        return _json(board.show(tid).to_dict())


@tool(toolset=TOOLSET, parallel_safe=True)
def kanban_list(ctx: ToolContext, status: str = "", assignee: str = "") -> str:
    """List tasks on the board, most urgent first.

    Args:
        status: only tasks in this status (todo, claimed, in_progress, blocked, review, done,
            failed); empty for all
        assignee: only tasks for this profile (or "any"); empty for all
    """
    try:
        statuses = [Status(status)] if status else None
    except ValueError:
        raise ToolArgumentError(
            f"unknown status {status!r}; use one of {', '.join(s.value for s in Status)}"
        ) from None
    with _board(ctx) as board:
        tasks = board.list(statuses=statuses, assignee=assignee or None)
        return _json([_brief(t) for t in tasks])


@tool(toolset=TOOLSET, controls=("title", "body", "assignee"), consequential=True)
def kanban_create(
    ctx: ToolContext,
    title: str,
    body: str = "",
    priority: int = 0,
    assignee: str = "any",
    parent_id: int = 0,
    blocked_by: list[int] | None = None,
) -> str:
    """Post a new task (for example a sub-task of the one you are working on).

    Args:
        title: a few words saying what is to be done
        body: details, acceptance criteria
        priority: higher runs first
        assignee: the profile that should do it, or "any"
        parent_id: the parent task; 0 means the task this worker is working on, if any
        blocked_by: ids of tasks that must be done before this one can start
    """
    with _board(ctx) as board:
        parent = parent_id if parent_id > 0 else None
        if parent is None:
            own = _own_task(board, ctx)
            parent = own.id if own is not None else None
        task = board.add(
            NewTask(
                title=title,
                body=body,
                priority=priority,
                assignee=assignee or "any",
                parent_id=parent,
                blocked_by=tuple(blocked_by or ()),
            ),
            author=_author(ctx),
        )
        return _json(_brief(task) | {"parent_id": task.parent_id})


@tool(toolset=TOOLSET)
def kanban_link(ctx: ToolContext, blocker_id: int, blocked_id: int) -> str:
    """Record that one task blocks another (the blocked one waits until the blocker is
    done). A link that would make a dependency cycle is refused.

    Args:
        blocker_id: the task that must be done first
        blocked_id: the task that waits for it
    """
    with _board(ctx) as board:
        board.link(blocker_id, blocked_id)
        return _json({"linked": True, "blocker_id": blocker_id, "blocked_id": blocked_id})


@tool(toolset=TOOLSET)
def kanban_comment(ctx: ToolContext, body: str, task_id: int = 0) -> str:
    """Add a comment (progress, findings, a question for the owner) to a task.

    Args:
        body: the comment
        task_id: the task; 0 means the task this worker is working on
    """
    with _board(ctx) as board:
        tid, _ = _target(board, ctx, task_id)
        comment = board.comment(tid, body, author=_author(ctx))
        return _json({"task_id": tid, "comment_id": comment.id})


@tool(toolset=TOOLSET)
def kanban_heartbeat(ctx: ToolContext, note: str = "") -> str:
    """Renew the lease on the task this worker is working on (it also renews itself
    between steps); optionally record progress as a comment.

    Args:
        note: progress to record as a comment; empty for none
    """
    with _board(ctx) as board:
        tid, token = _target(board, ctx, 0)
        assert token is not None
        if ctx.config is None:
            raise ToolArgumentError("the kanban tools need a config")
        expires = board.heartbeat(token, ctx.config.kanban.lease_seconds)
        if note.strip():
            board.comment(tid, note, author=_author(ctx))
        return _json({"task_id": tid, "lease_expires_at": expires})


@tool(toolset=TOOLSET)
def kanban_block(ctx: ToolContext, reason: str, task_id: int = 0) -> str:
    """Stop work on a task that cannot go on without someone else (a decision, access,
    another task); it waits in `blocked` until unblocked.

    Args:
        reason: what or whom the task is waiting for
        task_id: the task; 0 means the task this worker is working on
    """
    with _board(ctx) as board:
        tid, token = _leased(board, ctx, task_id)
        task = board.block(tid, reason, lease=token, author=_author(ctx))
        return _json(_brief(task))


@tool(toolset=TOOLSET)
def kanban_unblock(ctx: ToolContext, task_id: int, note: str = "") -> str:
    """Ask to return a blocked task to todo. Only the owner unblocks (a blocked task
    waits for them): this refuses and says the command the owner uses.

    Args:
        task_id: the blocked task
        note: what changed
    """
    with _board(ctx) as board:
        raise owner_only(task_id, board.show(task_id).status.value, _author(ctx))


@tool(toolset=TOOLSET)
def kanban_request_review(ctx: ToolContext, summary: str, task_id: int = 0) -> str:
    """Hand finished work to the owner for approval instead of marking it done.

    Args:
        summary: what was done and what the owner should check
        task_id: the task; 0 means the task this worker is working on
    """
    with _board(ctx) as board:
        tid, token = _leased(board, ctx, task_id)
        return _json(_brief(board.request_review(tid, summary, lease=token, author=_author(ctx))))


@tool(toolset=TOOLSET)
def kanban_complete(ctx: ToolContext, summary: str, task_id: int = 0) -> str:
    """Mark a task done, with a summary of the result.

    Args:
        summary: what was done (the result others will read)
        task_id: the task; 0 means the task this worker is working on
    """
    with _board(ctx) as board:
        tid, token = _leased(board, ctx, task_id)
        return _json(_brief(board.complete(tid, summary, lease=token, author=_author(ctx))))


@tool(toolset=TOOLSET)
def kanban_attach(ctx: ToolContext, ref: str, note: str = "", task_id: int = 0) -> str:
    """Attach a file in the Herald home, or a URL, to a task.

    Args:
        ref: an http(s) URL, or a file path (relative paths are relative to the home)
        note: what it is
        task_id: the task; 0 means the task this worker is working on
    """
    with _board(ctx) as board:
        tid, _ = _target(board, ctx, task_id)
        if ref.startswith(("http://", "https://")):
            attachment = board.attach(tid, "url", ref, note=note)
        else:
            assert ctx.home is not None
            root = ctx.home.root.resolve()
            path = (root / Path(ref).expanduser()).resolve()
            if not path.is_relative_to(root):
                raise ToolArgumentError(
                    f"{ref} is outside the Herald home ({root}); copy it into the home first"
                )
            if not path.is_file():
                raise ToolArgumentError(f"no file {path}; attach an existing file or a URL")
            attachment = board.attach(tid, "file", str(path), note=note)
        return _json({"task_id": tid, "attachment_id": attachment.id, "ref": attachment.ref})


TOOLS = (
    kanban_show,
    kanban_list,
    kanban_create,
    kanban_link,
    kanban_comment,
    kanban_heartbeat,
    kanban_block,
    kanban_unblock,
    kanban_request_review,
    kanban_complete,
    kanban_attach,
)
