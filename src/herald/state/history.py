"""Read-only queries over past sessions, for session search and browsing.

Every function takes a read connection (the store hands one from its pool)
and returns records; nothing here writes. Archived rows (`active=0`, left by
compression) are part of history: they are counted, found by search and shown
when a window is anchored on one of them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from herald.state.records import SessionRecord, StoredMessage

MAX_LINEAGE_DEPTH = 1_000  # lineage cannot loop (the store checks), this is belt and braces


@dataclass(frozen=True)
class Lineage:
    """Sessions linked by `parent_id`: one conversation continued over several sessions."""

    root_id: str
    latest_id: str  # the most recently created member
    session_ids: tuple[str, ...]  # oldest first


@dataclass(frozen=True)
class SessionSummary:
    session: SessionRecord
    message_count: int  # active rows
    archived_count: int  # rows archived by compression
    first_user_message: str | None


@dataclass(frozen=True)
class SessionSlice:
    """The first and last active messages of a session (all of them when few)."""

    head: tuple[StoredMessage, ...]
    tail: tuple[StoredMessage, ...]
    total: int  # active rows
    archived: int

    @property
    def omitted(self) -> int:
        return self.total - len(self.head) - len(self.tail)


def _placeholders(count: int) -> str:
    return ", ".join("?" for _ in range(count))


def _messages(rows: Iterable[sqlite3.Row]) -> list[StoredMessage]:
    return [StoredMessage.from_row(row) for row in rows]


def message_by_id(conn: sqlite3.Connection, message_id: int) -> StoredMessage | None:
    rows = conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchall()
    return StoredMessage.from_row(rows[0]) if rows else None


def message_window(
    conn: sqlite3.Connection, anchor: StoredMessage, before: int, after: int
) -> list[StoredMessage]:
    """`anchor` with up to `before`/`after` neighbours, in conversation order.

    An active anchor is shown among the active rows (what the session looks like
    now, summaries included). An archived anchor is shown among all rows in the
    order they were written, so its original neighbours, archived too, come with it.
    """
    before, after = max(0, before), max(0, after)
    sid = anchor.session_id
    if anchor.active:
        earlier = conn.execute(
            "SELECT * FROM messages WHERE session_id = ? AND active = 1"
            " AND (position < ? OR (position = ? AND seq < ?))"
            " ORDER BY position DESC, seq DESC LIMIT ?",
            (sid, anchor.position, anchor.position, anchor.seq, before),
        ).fetchall()
        later = conn.execute(
            "SELECT * FROM messages WHERE session_id = ? AND active = 1"
            " AND (position > ? OR (position = ? AND seq > ?))"
            " ORDER BY position, seq LIMIT ?",
            (sid, anchor.position, anchor.position, anchor.seq, after),
        ).fetchall()
    else:
        earlier = conn.execute(
            "SELECT * FROM messages WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
            (sid, anchor.seq, before),
        ).fetchall()
        later = conn.execute(
            "SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (sid, anchor.seq, after),
        ).fetchall()
    return [*_messages(reversed(earlier)), anchor, *_messages(later)]


def session_slice(conn: sqlite3.Connection, session_id: str, head: int, tail: int) -> SessionSlice:
    total, archived = message_counts(conn, [session_id]).get(session_id, (0, 0))
    head, tail = max(0, head), max(0, tail)
    if total <= head + tail:
        rows = conn.execute(
            "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY position, seq",
            (session_id,),
        ).fetchall()
        return SessionSlice(tuple(_messages(rows)), (), total, archived)
    first = conn.execute(
        "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY position, seq LIMIT ?",
        (session_id, head),
    ).fetchall()
    last = conn.execute(
        "SELECT * FROM messages WHERE session_id = ? AND active = 1"
        " ORDER BY position DESC, seq DESC LIMIT ?",
        (session_id, tail),
    ).fetchall()
    return SessionSlice(tuple(_messages(first)), tuple(_messages(reversed(last))), total, archived)


def message_counts(
    conn: sqlite3.Connection, session_ids: Sequence[str]
) -> dict[str, tuple[int, int]]:
    """(active, archived) row counts per session."""
    if not session_ids:
        return {}
    rows = conn.execute(
        "SELECT session_id, SUM(active), COUNT(*) FROM messages"
        f" WHERE session_id IN ({_placeholders(len(session_ids))}) GROUP BY session_id",
        list(session_ids),
    ).fetchall()
    counts = {sid: (0, 0) for sid in session_ids}
    for sid, active, total in rows:
        counts[sid] = (int(active or 0), int(total) - int(active or 0))
    return counts


def lineages(conn: sqlite3.Connection, session_ids: Sequence[str]) -> dict[str, Lineage]:
    """The lineage of each of `session_ids` (unknown ids are left out)."""
    ids = list(dict.fromkeys(session_ids))
    if not ids:
        return {}
    root_rows = conn.execute(
        "WITH RECURSIVE up(start, id, parent, depth) AS ("
        f" SELECT id, id, parent_id, 0 FROM sessions WHERE id IN ({_placeholders(len(ids))})"
        " UNION ALL SELECT up.start, s.id, s.parent_id, up.depth + 1"
        " FROM sessions s JOIN up ON s.id = up.parent WHERE up.depth < ?)"
        " SELECT start, id FROM up WHERE parent IS NULL OR depth = ?",
        [*ids, MAX_LINEAGE_DEPTH, MAX_LINEAGE_DEPTH],
    ).fetchall()
    root_of = {start: root for start, root in root_rows}
    roots = sorted(set(root_of.values()))
    if not roots:
        return {}
    member_rows = conn.execute(
        "WITH RECURSIVE down(root, id, depth) AS ("
        f" SELECT id, id, 0 FROM sessions WHERE id IN ({_placeholders(len(roots))})"
        " UNION ALL SELECT down.root, s.id, down.depth + 1"
        " FROM sessions s JOIN down ON s.parent_id = down.id WHERE down.depth < ?)"
        " SELECT down.root, s.id FROM down JOIN sessions s ON s.id = down.id"
        " ORDER BY s.created_at, s.id",
        [*roots, MAX_LINEAGE_DEPTH],
    ).fetchall()
    members: dict[str, list[str]] = {}
    for root, sid in member_rows:
        group = members.setdefault(root, [])
        if sid not in group:
            group.append(sid)
    by_root = {
        root: Lineage(root, group[-1], tuple(group)) for root, group in members.items() if group
    }
    return {sid: by_root[root] for sid, root in root_of.items() if root in by_root}


def recent_sessions(
    conn: sqlite3.Connection,
    *,
    limit: int,
    exclude: Sequence[str] = (),
    identity: str | None = None,
) -> list[SessionSummary]:
    """The most recently updated sessions that hold messages, newest first (only
    `identity`'s when given)."""
    excluded = list(exclude)
    not_in = f" AND id NOT IN ({_placeholders(len(excluded))})" if excluded else ""
    mine = " AND s.identity = ?" if identity is not None else ""
    rows = conn.execute(
        f"SELECT * FROM sessions s WHERE EXISTS (SELECT 1 FROM messages m"
        f" WHERE m.session_id = s.id){not_in}{mine} ORDER BY updated_at DESC, id DESC LIMIT ?",
        [*excluded, *([identity] if identity is not None else []), max(0, limit)],
    ).fetchall()
    sessions = [SessionRecord.from_row(row) for row in rows]
    return summarize(conn, sessions)


def summarize(conn: sqlite3.Connection, sessions: Sequence[SessionRecord]) -> list[SessionSummary]:
    counts = message_counts(conn, [s.id for s in sessions])
    out: list[SessionSummary] = []
    for session in sessions:
        first = conn.execute(
            "SELECT content FROM messages WHERE session_id = ? AND role = 'user'"
            " ORDER BY seq LIMIT 1",
            (session.id,),
        ).fetchall()
        active, archived = counts.get(session.id, (0, 0))
        out.append(SessionSummary(session, active, archived, first[0][0] if first else None))
    return out


# A session's meta key naming the chat it serves ("platform:chat[:thread]"): the
# per-identity sessions of one group chat share it, so a reply is found across them.
CHAT_META_KEY = "chat"
REPLY_SCAN = 200  # messages after a question looked at for its reply
REPLY_SECONDS = 3600.0  # a reply comes within this long of the question


def identities_among(conn: sqlite3.Connection, names: Sequence[str]) -> set[str]:
    """Those of `names` that some session belongs to (one index lookup each)."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return set()
    marks = ", ".join("?" * len(wanted))
    rows = conn.execute(
        f"SELECT DISTINCT identity FROM sessions WHERE identity IN ({marks})", wanted
    ).fetchall()
    return {str(row[0]) for row in rows}


def replies(
    conn: sqlite3.Connection, message_ids: Sequence[int], identity: str | None
) -> dict[int, int]:
    """For each of `message_ids`, the message said next *by someone else* in the same
    place: its own session, or a session of the same chat (`meta.chat`: the per-identity
    sessions of one group chat), within REPLY_SCAN messages and REPLY_SECONDS. With
    `identity`, only that identity's messages are looked up or returned (invariant 19)."""
    out: dict[int, int] = {}
    scoped = " AND m.identity = ?" if identity is not None else ""
    for message_id in dict.fromkeys(message_ids):
        row = conn.execute(
            "SELECT m.session_id, m.identity, m.role, m.created_at,"
            f" json_extract(s.meta, '$.{CHAT_META_KEY}') AS chat FROM messages m"
            " JOIN sessions s ON s.id = m.session_id WHERE m.id = ?",
            (message_id,),
        ).fetchone()
        if row is None or (identity is not None and row["identity"] != identity):
            continue
        params: list[object] = [
            message_id, message_id + REPLY_SCAN, float(row["created_at"]) + REPLY_SECONDS,
            row["session_id"], row["chat"], row["chat"], row["identity"], row["role"],
        ]  # fmt: skip
        if identity is not None:
            params.append(identity)
        found = conn.execute(
            "SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session_id"
            " WHERE m.id > ? AND m.id <= ? AND m.created_at <= ?"
            " AND (m.session_id = ? OR (? IS NOT NULL AND"
            f" json_extract(s.meta, '$.{CHAT_META_KEY}') = ?))"
            f" AND (m.identity != ? OR m.role != ?){scoped} ORDER BY m.id LIMIT 1",
            params,
        ).fetchone()
        if found is not None:
            out[message_id] = int(found[0])
    return out
