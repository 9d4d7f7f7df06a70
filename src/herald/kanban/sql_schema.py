"""The board's tables and row helpers, written once for SQLite and PostgreSQL."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from herald.kanban.model import Status, Task

Row = Mapping[str, Any]
Query = Callable[[str, Sequence[Any]], list[Row]]

TASK_COLUMNS = (
    "id, title, body, status, priority, assignee, parent_id, created_at, updated_at, "
    "attempts, max_attempts, worker_session_id, lease_token, lease_owner, lease_host, "
    "lease_pid, lease_expires_at, result, blocked_reason"
)
HELD_SQL = "('claimed', 'in_progress')"
LEASE_CLEARED = (
    "lease_token = NULL, lease_owner = NULL, lease_host = NULL, lease_pid = NULL, "
    "lease_expires_at = NULL"
)
# Outcomes of claims that used up an attempt; their reasons explain a failure.
ATTEMPT_OUTCOMES = ("released", "expired", "dead")


def schema_sql(id_column: str, real: str) -> list[str]:
    """The tables, written once for both dialects."""
    return [
        f"""CREATE TABLE IF NOT EXISTS kanban_tasks (
            id {id_column},
            title TEXT NOT NULL,
            body TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'todo',
            priority INTEGER NOT NULL DEFAULT 0,
            assignee TEXT NOT NULL DEFAULT 'any',
            parent_id BIGINT REFERENCES kanban_tasks(id),
            created_at {real} NOT NULL,
            updated_at {real} NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL DEFAULT 3,
            worker_session_id TEXT,
            lease_token TEXT,
            lease_owner TEXT,
            lease_host TEXT,
            lease_pid INTEGER,
            lease_expires_at {real},
            result TEXT,
            blocked_reason TEXT)""",
        "CREATE INDEX IF NOT EXISTS kanban_tasks_status ON kanban_tasks(status, priority)",
        """CREATE TABLE IF NOT EXISTS kanban_links (
            blocker_id BIGINT NOT NULL REFERENCES kanban_tasks(id),
            blocked_id BIGINT NOT NULL REFERENCES kanban_tasks(id),
            PRIMARY KEY (blocker_id, blocked_id))""",
        f"""CREATE TABLE IF NOT EXISTS kanban_comments (
            id {id_column},
            task_id BIGINT NOT NULL REFERENCES kanban_tasks(id),
            author TEXT NOT NULL,
            body TEXT NOT NULL,
            created_at {real} NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS kanban_attachments (
            id {id_column},
            task_id BIGINT NOT NULL REFERENCES kanban_tasks(id),
            kind TEXT NOT NULL,
            ref TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            created_at {real} NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS kanban_claims (
            id {id_column},
            task_id BIGINT NOT NULL REFERENCES kanban_tasks(id),
            token TEXT NOT NULL UNIQUE,
            owner TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER,
            claimed_at {real} NOT NULL,
            ended_at {real},
            outcome TEXT,
            reason TEXT)""",
        "CREATE INDEX IF NOT EXISTS kanban_claims_task ON kanban_claims(task_id)",
    ]


def shortest_path(edges: Mapping[int, Sequence[int]], start: int, goal: int) -> list[int] | None:
    """The shortest chain of links from `start` to `goal`, or None."""
    previous: dict[int, int | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            chain: list[int] = []
            current: int | None = node
            while current is not None:
                chain.append(current)
                current = previous[current]
            return chain[::-1]
        for nxt in edges.get(node, ()):
            if nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    return None


def plain(row: Row) -> dict[str, Any]:
    return {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row has keys(), not iter


def task_from_row(row: Row, **extra: Any) -> Task:
    data = plain(row)
    data["status"] = Status(data["status"])
    for key in ("id", "parent_id"):
        if data[key] is not None:
            data[key] = int(data[key])
    return Task(**data, **extra)
