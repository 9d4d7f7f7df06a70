"""Spend totals the governor checks caps against, and the once-only record of warnings.

Totals come from the per-call ``usage`` rows, so every kind of call counts: the
main model, summaries, background reviews and sub-agents. A session's total
covers its whole lineage (the root session and every descendant), so a review
or a sub-agent spends from the session that started it.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Spent:
    cost_usd: float = 0.0
    tokens: int = 0  # prompt + completion


_LINEAGE = (
    "WITH RECURSIVE up(id, parent) AS ("
    " SELECT id, parent_id FROM sessions WHERE id = ?"
    " UNION SELECT s.id, s.parent_id FROM sessions s JOIN up ON s.id = up.parent),"
    " root(id) AS (SELECT id FROM up WHERE parent IS NULL),"
    " tree(id) AS (SELECT id FROM root UNION SELECT s.id FROM sessions s"
    " JOIN tree ON s.parent_id = tree.id)"
)


def spent_since(
    conn: sqlite3.Connection,
    since: float | None = None,
    *,
    session_id: str | None = None,
    source: str | None = None,
) -> Spent:
    """What was spent since ``since`` (epoch seconds), optionally within one session's
    lineage or one source's sessions."""
    prefix, clauses, params = "", ["1 = 1"], []
    if session_id is not None:
        prefix = _LINEAGE
        params.append(session_id)
        clauses.append("u.session_id IN (SELECT id FROM tree)")
    if since is not None:
        clauses.append("u.created_at >= ?")
        params.append(since)
    if source is not None:
        clauses.append("u.session_id IN (SELECT id FROM sessions WHERE source = ?)")
        params.append(source)
    row = conn.execute(
        f"{prefix} SELECT SUM(u.cost_usd), SUM(u.prompt_tokens + u.completion_tokens)"
        f" FROM usage u WHERE {' AND '.join(clauses)}",
        params,
    ).fetchone()
    return Spent(float(row[0] or 0.0), int(row[1] or 0))


def claim_warning(conn: sqlite3.Connection, cap: str, period: str, threshold: float) -> bool:
    """True the first time (cap, period, threshold) is claimed; inside a write transaction."""
    cursor = conn.execute(
        "INSERT OR IGNORE INTO spend_warnings (cap, period, threshold, created_at)"
        " VALUES (?, ?, ?, ?)",
        (cap, period, threshold, time.time()),
    )
    return cursor.rowcount == 1


__all__ = ["Spent", "claim_warning", "spent_since"]
