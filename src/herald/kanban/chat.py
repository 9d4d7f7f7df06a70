"""`/kanban` in the chat (the REPL and the gateway): what needs the owner, and the
owner's answers, without a terminal on the board's machine.

``/kanban`` lists the tasks waiting for a human (in review, blocked) and counts the
rest; ``/kanban approve ID [NOTE]``, ``reject ID REASON`` and ``unblock ID [NOTE]``
do what `herald kanban approve/reject/unblock` do, as the owner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from herald.kanban.model import KanbanError, Status, Task

if TYPE_CHECKING:
    from herald.config import Settings

USAGE = (
    "Usage: /kanban, /kanban approve ID [NOTE], /kanban reject ID REASON, /kanban unblock ID [NOTE]"
)
OWNER = "owner"
WAITING = (Status.REVIEW, Status.BLOCKED)


def kanban_command(settings: Settings, arg: str) -> str:
    """The reply to ``/kanban ARG``; a board that cannot open or an action it refuses
    is said in the reply, never raised."""
    from herald.kanban.open import open_board

    verb, _, rest = arg.strip().partition(" ")
    verb = verb.lower()
    if verb not in ("", "list", "approve", "reject", "unblock"):
        return USAGE
    try:
        with open_board(settings.config, settings.home, settings.secrets) as board:
            if verb in ("", "list"):
                return _overview(board.list())
            task_text, _, text = rest.strip().partition(" ")
            task_id = _task_id(task_text)
            if task_id is None or (verb == "reject" and not text.strip()):
                return USAGE
            note = text.strip()
            if verb == "approve":
                task = board.approve(task_id, author=OWNER, note=note)
                return f"Approved #{task.id} {task.title}: it is {task.status.value}."
            if verb == "reject":
                task = board.reject(task_id, note, author=OWNER)
                return f"Sent #{task.id} {task.title} back: it is {task.status.value}."
            task = board.unblock(task_id, author=OWNER, note=note)
            return f"Unblocked #{task.id} {task.title}: it is {task.status.value}."
    except KanbanError as exc:
        return str(exc)


def _task_id(text: str) -> int | None:
    text = text.lstrip("#")
    return int(text) if text.isdigit() else None


def _overview(tasks: list[Task]) -> str:
    waiting = [t for t in tasks if t.status in WAITING]
    lines = [_line(t) for t in waiting] or ["Nothing on the board waits for you."]
    counts: dict[str, int] = {}
    for task in tasks:
        if task.status not in WAITING:
            counts[task.status.value] = counts.get(task.status.value, 0) + 1
    if counts:
        lines.append("Also: " + ", ".join(f"{n} {status}" for status, n in counts.items()))
    if waiting:
        lines.append("Answer with /kanban approve ID, reject ID REASON or unblock ID.")
    return "\n".join(lines)


def _line(task: Task) -> str:
    if task.status is Status.REVIEW:
        why = task.result or "no summary"
        return f"#{task.id} {task.title} — in review: {_short(why)}"
    return f"#{task.id} {task.title} — blocked: {_short(task.blocked_reason or 'no reason given')}"


def _short(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
