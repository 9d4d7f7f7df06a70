"""Message vectors for hybrid search, kept beside the messages in state.db.

The table is created on first write (not by a numbered migration): a home without
the embedding model never has it, and every reader treats a missing table as "no
vectors yet". A row is one message's unit vector (float32 bytes) under the model
that made it; a different model's rows are ignored and re-made. Vectors are
derived data: deleting the table loses nothing but the time to rebuild it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

CREATE = (
    "CREATE TABLE IF NOT EXISTS message_vectors ("
    " message_id INTEGER PRIMARY KEY REFERENCES messages(id),"
    " model TEXT NOT NULL,"
    " vector BLOB NOT NULL)"
)
# Only what people and the model said is embedded: tool output is mostly noise to a
# semantic match and would crowd out the conversation.
EMBEDDED_ROLES = ("user", "assistant")
MAX_SCAN = 50_000  # newest vectors a query compares against (75 MB, brute force in numpy)


def _missing_table(exc: sqlite3.OperationalError) -> bool:
    return "no such table" in str(exc)


def pending(conn: sqlite3.Connection, model: str, limit: int) -> list[tuple[int, str]]:
    """Up to `limit` (id, content) of messages with no vector from `model`, newest first
    (what was said lately is what is asked about first)."""
    roles = ", ".join("?" for _ in EMBEDDED_ROLES)
    head = "SELECT m.id, m.content FROM messages m "
    tail = (
        f" m.content IS NOT NULL AND m.content != '' AND m.role IN ({roles})"
        " ORDER BY m.id DESC LIMIT ?"
    )
    try:
        rows = conn.execute(
            head + "LEFT JOIN message_vectors v ON v.message_id = m.id"
            " WHERE (v.message_id IS NULL OR v.model != ?) AND" + tail,
            [model, *EMBEDDED_ROLES, limit],
        ).fetchall()
    except sqlite3.OperationalError as exc:
        if not _missing_table(exc):
            raise
        rows = conn.execute(head + "WHERE" + tail, [*EMBEDDED_ROLES, limit]).fetchall()
    return [(int(row[0]), str(row[1])) for row in rows]


def put(conn: sqlite3.Connection, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
    """Store vectors (inside the caller's write transaction)."""
    conn.execute(CREATE)
    conn.executemany(
        "INSERT INTO message_vectors (message_id, model, vector) VALUES (?, ?, ?)"
        " ON CONFLICT(message_id) DO UPDATE SET model = excluded.model,"
        " vector = excluded.vector",
        [(message_id, model, vector) for message_id, vector in rows],
    )


def load(
    conn: sqlite3.Connection,
    model: str,
    *,
    identity: str | None,
    session_id: str | None,
    exclude_session_id: str | None,
) -> list[tuple[int, bytes]]:
    """(message id, vector bytes) of the newest MAX_SCAN vectors the filters allow."""
    clauses = ["v.model = ?"]
    params: list[object] = [model]
    if identity is not None:  # only that identity's messages (invariant 19)
        clauses.append("m.identity = ?")
        params.append(identity)
    if session_id is not None:
        clauses.append("m.session_id = ?")
        params.append(session_id)
    if exclude_session_id is not None:
        clauses.append("m.session_id != ?")
        params.append(exclude_session_id)
    sql = (
        "SELECT v.message_id, v.vector FROM message_vectors v JOIN messages m"
        f" ON m.id = v.message_id WHERE {' AND '.join(clauses)}"
        " ORDER BY v.message_id DESC LIMIT ?"
    )
    try:
        rows = conn.execute(sql, [*params, MAX_SCAN]).fetchall()
    except sqlite3.OperationalError as exc:
        if not _missing_table(exc):
            raise
        return []
    return [(int(row[0]), bytes(row[1])) for row in rows]


def candidate_rows(conn: sqlite3.Connection, ids: Sequence[int]) -> list[sqlite3.Row]:
    """id, session_id, role, created_at, active, identity, content of `ids` (any order)."""
    out: list[sqlite3.Row] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        out += conn.execute(
            "SELECT id, session_id, role, created_at, active, identity, content FROM messages"
            f" WHERE id IN ({marks})",
            chunk,
        ).fetchall()
    return out
