"""How the CLI shows the board: a column per status, and one task in full."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType

    from herald.kanban import Task

COLUMNS = (
    ("todo", ("todo",)),
    ("doing", ("claimed", "in_progress")),
    ("blocked", ("blocked",)),
    ("review", ("review",)),
    ("done", ("done",)),
    ("failed", ("failed",)),
)
STYLE = {"todo": "cyan", "doing": "yellow", "blocked": "red", "review": "magenta",
         "done": "green", "failed": "bold red"}  # fmt: skip
DONE_SHOWN = 8


def _card(task: Task) -> str:
    from rich.markup import escape

    meta = []
    if task.priority:
        meta.append(f"p{task.priority}")
    if task.assignee != "any":
        meta.append(f"@{task.assignee}")
    if task.blocked_by and task.status.value == "todo":
        meta.append("waits " + ",".join(f"#{b}" for b in task.blocked_by))
    if task.status.value in ("claimed", "in_progress") and task.lease_host:
        meta.append(f"on {task.lease_host}")
    if task.attempts:
        meta.append(f"try {task.attempts + 1}/{task.max_attempts}")
    tail = f"\n[dim]{escape(' '.join(meta))}[/dim]" if meta else ""
    return f"[bold]#{task.id}[/bold] {escape(task.title)}{tail}"


def _grouped(tasks: list[Task]) -> tuple[dict[str, list[Task]], int]:
    """Tasks per board column, and how many done ones are not shown."""
    grouped: dict[str, list[Task]] = {name: [] for name, _ in COLUMNS}
    for task in tasks:
        for name, statuses in COLUMNS:
            if task.status.value in statuses:
                grouped[name].append(task)
    hidden = max(0, len(grouped["done"]) - DONE_SHOWN)
    grouped["done"] = sorted(grouped["done"], key=lambda t: -t.updated_at)[:DONE_SHOWN]
    return grouped, hidden


def board_text(tasks: list[Task]) -> str:
    """The board for a pipe or a file: a section per column, a task per line."""
    from rich.text import Text

    grouped, hidden = _grouped(tasks)
    lines = []
    for name, _ in COLUMNS:
        count = len(grouped[name]) + (hidden if name == "done" else 0)
        lines.append(f"{name} ({count})")
        for task in grouped[name]:
            card = Text.from_markup(_card(task)).plain.replace("\n", "  ")
            lines.append(f"  {card}")
        if name == "done" and hidden:
            lines.append(f"  … {hidden} more")
    return "\n".join(lines) + "\n"


def board_table(tasks: list[Task]) -> RenderableType:
    from rich.table import Table

    grouped, hidden = _grouped(tasks)
    table = Table(expand=True, show_lines=True, pad_edge=False)
    for name, _ in COLUMNS:
        count = len(grouped[name]) + (hidden if name == "done" else 0)
        table.add_column(f"{name} ({count})", style=STYLE[name], ratio=1, overflow="fold")
    depth = max((len(v) for v in grouped.values()), default=0)
    for row in range(depth):
        table.add_row(
            *[_card(grouped[name][row]) if row < len(grouped[name]) else "" for name, _ in COLUMNS]
        )
    if hidden:
        table.add_row(
            *["" if name != "done" else f"[dim]… {hidden} more[/dim]" for name, _ in COLUMNS]
        )
    return table


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "-"


def task_detail(task: Task) -> RenderableType:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    lines = [
        f"[bold]#{task.id} {escape(task.title)}[/bold]  [{STYLE.get(_column(task), 'white')}]"
        f"{task.status.value}[/]",
        f"priority {task.priority} · assignee {escape(task.assignee)} · attempts "
        f"{task.attempts}/{task.max_attempts} · created {_when(task.created_at)} · updated "
        f"{_when(task.updated_at)}",
    ]
    if task.parent_id:
        lines.append(f"parent #{task.parent_id}")
    if task.children:
        lines.append("children " + ", ".join(f"#{c}" for c in task.children))
    if task.blocked_by:
        lines.append("blocked by " + ", ".join(f"#{b}" for b in task.blocked_by))
    if task.blocks:
        lines.append("blocks " + ", ".join(f"#{b}" for b in task.blocks))
    if task.lease_owner:
        lines.append(
            f"held by {escape(task.lease_owner)} until {_when(task.lease_expires_at)}"
            + (f" · session {task.worker_session_id}" if task.worker_session_id else "")
        )
    if task.blocked_reason:
        lines.append(f"[red]blocked:[/red] {escape(task.blocked_reason)}")
    if task.result:
        lines.append(f"result: {escape(task.result)}")
    parts: list[RenderableType] = [Text.from_markup("\n".join(lines))]
    if task.body.strip():
        parts.append(Text("\n" + task.body.strip()))
    if task.attachments:
        parts.append(Text.from_markup("\n[bold]attachments[/bold]"))
        parts += [
            Text(f"  {a.kind}: {a.ref}" + (f" ({a.note})" if a.note else ""))
            for a in task.attachments
        ]
    if task.comments:
        parts.append(Text.from_markup("\n[bold]comments[/bold]"))
        parts += [
            Text.from_markup(
                f"  [dim]{_when(c.created_at)} {escape(c.author)}:[/dim] {escape(c.body)}"
            )
            for c in task.comments
        ]
    return Group(*parts)


def _column(task: Task) -> str:
    return next(name for name, statuses in COLUMNS if task.status.value in statuses)
