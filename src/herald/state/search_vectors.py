"""Message vectors for hybrid search, kept beside the messages in state.db.

The table is created on first write (not by a numbered migration): a home without
the embedding model never has it, and every reader treats a missing table as "no
vectors yet". A row is one message's unit vector (float32 bytes) under the model
that made it; a different model's rows are ignored and re-made. Vectors are
derived data: deleting the table loses nothing but the time to rebuild it.

Only the newest WINDOW messages are embedded and compared against (words still find
everything): that bounds both the memory a search holds and the work per search at
any history size. `seq` grows with every row written, so a reader that keeps the
vectors in memory loads only the rows written since it last looked.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Sequence

from herald.state.history import CHAT_META_KEY

CREATE = (
    "CREATE TABLE IF NOT EXISTS message_vectors ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " message_id INTEGER NOT NULL UNIQUE REFERENCES messages(id),"
    " model TEXT NOT NULL,"
    " vector BLOB NOT NULL)"
)
# A random name given to this file's vectors when the table is made: a reader holding
# vectors in memory checks it, so a file restored or replaced at the same path is
# never searched with another file's vectors.
CREATE_META = (
    "CREATE TABLE IF NOT EXISTS message_vectors_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
)
# Only what people and the model said is embedded: tool output is mostly noise to a
# semantic match and would crowd out the conversation.
EMBEDDED_ROLES = ("user", "assistant")
WINDOW = 50_000  # newest messages embedded and searched by meaning (75 MB of vectors)


def _missing_table(exc: sqlite3.OperationalError) -> bool:
    return "no such table" in str(exc)


def window_floor(conn: sqlite3.Connection) -> int:
    """Messages with ids above this are inside the window."""
    row = conn.execute("SELECT MAX(id) FROM messages").fetchone()
    return max(0, int(row[0] or 0) - WINDOW)


def pending(
    conn: sqlite3.Connection,
    model: str,
    limit: int,
    after_id: int = 0,
    before_id: int | None = None,
) -> list[tuple[int, str]]:
    """Up to `limit` (id, content) of messages in the window with no vector from
    `model`, newest first (what was said lately is what is asked about first); only
    ids between `after_id` and `before_id` (a backlog walk's cursor: without it each
    batch would step again over every message the walk already embedded)."""
    roles = ", ".join("?" for _ in EMBEDDED_ROLES)
    floor = max(window_floor(conn), after_id)
    ceiling = (1 << 62) if before_id is None else before_id
    head = "SELECT m.id, m.content FROM messages m "
    tail = (
        " m.id > ? AND m.id < ? AND m.content IS NOT NULL AND m.content != ''"
        f" AND m.role IN ({roles}) ORDER BY m.id DESC LIMIT ?"
    )
    bounds = [floor, ceiling, *EMBEDDED_ROLES, limit]
    try:
        rows = conn.execute(
            head + "LEFT JOIN message_vectors v ON v.message_id = m.id"
            " WHERE (v.message_id IS NULL OR v.model != ?) AND" + tail,
            [model, *bounds],
        ).fetchall()
    except sqlite3.OperationalError as exc:
        if not _missing_table(exc):
            raise
        rows = conn.execute(head + "WHERE" + tail, bounds).fetchall()
    return [(int(row[0]), str(row[1])) for row in rows]


def put(conn: sqlite3.Connection, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
    """Store vectors (inside the caller's write transaction). A message's earlier vector
    is replaced, under a new `seq`, so incremental readers see the change."""
    conn.execute(CREATE)
    conn.execute(CREATE_META)
    conn.execute(
        "INSERT OR IGNORE INTO message_vectors_meta (key, value) VALUES ('file', ?)",
        (secrets.token_hex(8),),
    )
    conn.executemany(
        "INSERT OR REPLACE INTO message_vectors (message_id, model, vector) VALUES (?, ?, ?)",
        [(message_id, model, vector) for message_id, vector in rows],
    )


def load_since(
    conn: sqlite3.Connection, model: str, after_seq: int, file_name: str
) -> tuple[list[tuple[int, int, str, str, float, bytes, str]], int, str]:
    """Rows (seq, message id, identity, session id, created_at, vector, place) written after
    `after_seq` for messages inside the window, the window's floor, and the file's vectors'
    name. When that name is not `file_name`, the rows are all of them (from seq 0). A
    message's place is where it was said: its session's chat (`meta.chat`, the
    per-identity sessions of one group chat), else its session."""
    floor = window_floor(conn)
    try:
        found = conn.execute("SELECT value FROM message_vectors_meta WHERE key = 'file'").fetchone()
        name = str(found[0]) if found else ""
        if name != file_name:
            after_seq = 0
        rows = conn.execute(
            "SELECT v.seq, v.message_id, m.identity, m.session_id, m.created_at, v.vector,"
            f" COALESCE(json_extract(s.meta, '$.{CHAT_META_KEY}'), m.session_id)"
            " FROM message_vectors v JOIN messages m ON m.id = v.message_id"
            " JOIN sessions s ON s.id = m.session_id"
            " WHERE v.seq > ? AND v.model = ? AND v.message_id > ? ORDER BY v.seq",
            (after_seq, model, floor),
        ).fetchall()
    except sqlite3.OperationalError as exc:
        if not _missing_table(exc):
            raise
        return [], floor, ""
    out = [
        (int(r[0]), int(r[1]), str(r[2]), str(r[3]), float(r[4]), bytes(r[5]), str(r[6]))
        for r in rows
    ]
    return out, floor, name


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
