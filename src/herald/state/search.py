"""Full-text search over messages that is safe for any text a user types.

User text is never handed to FTS5 as query syntax: it is split on whitespace
and every piece becomes a quoted FTS5 string, so operators (AND OR NOT NEAR
* ^ : parentheses, quotes) are just words. Scripts written without spaces
(Chinese, Japanese, Korean, Thai) form one long token under unicode61, so a
word inside such a run cannot be found by token match; for those queries a
substring scan of the newest messages supplements the index.

Cost is bounded at any history size: bm25 ranks by words in at most RANK_CAP
messages each (commoner words must match but do not rank), and substring scans read
at most the newest SUBSTRING_SCAN_ROWS rows.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

from herald.state.records import SearchHit

log = logging.getLogger(__name__)

SNIPPET_OPEN = "«"
SNIPPET_CLOSE = "»"
SNIPPET_ELLIPSIS = "…"
SNIPPET_TOKENS = 16
MAX_TERMS = 32  # longer queries keep their first 32 distinct terms
_SUBSTRING_CONTEXT = 40
# bm25 counts every row that holds each query word, and a word in most messages
# ("the", "file") is in hundreds of thousands: a word in more than RANK_CAP messages
# must still match but does not rank, and a query of only such words lists its matches
# newest first. That bounds a search at any history size.
RANK_CAP = 1_000
# Substring scans (text in scripts without spaces) read the newest rows only: a
# LIKE scan cannot use an index, and the whole table at a million rows takes seconds.
SUBSTRING_SCAN_ROWS = 20_000

# Unsegmented scripts: Thai/Lao/Khmer, CJK punctuation..Hangul, Hangul syllables,
# CJK compatibility, and the supplementary ideograph planes.
_UNSEGMENTED_RANGES = (
    (0x0E00, 0x0EFF),
    (0x1780, 0x17FF),
    (0x3000, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3FFFF),
)


def _is_unsegmented(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _UNSEGMENTED_RANGES)


def query_terms(query: str) -> list[str]:
    """Distinct whitespace-separated pieces that contain at least one letter or digit."""
    terms: list[str] = []
    for piece in query.split():
        if any(char.isalnum() for char in piece) and piece not in terms:
            terms.append(piece)
            if len(terms) == MAX_TERMS:
                break
    return terms


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH string requiring every term, each quoted as a literal string."""
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _filters(
    session_id: str | None,
    exclude_session_id: str | None,
    include_inactive: bool,
    identity: str | None = None,
) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    if identity is not None:  # only that identity's messages (invariant 19)
        clauses.append("m.identity = ?")
        params.append(identity)
    if session_id is not None:
        clauses.append("m.session_id = ?")
        params.append(session_id)
    if exclude_session_id is not None:
        clauses.append("m.session_id != ?")
        params.append(exclude_session_id)
    if not include_inactive:
        clauses.append("m.active = 1")
    return "".join(f" AND {clause}" for clause in clauses), params


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _substring_snippet(content: str, term: str) -> str:
    start = content.find(term)
    if start < 0:
        start = content.lower().find(term.lower())
    if start < 0:
        return content[: 2 * _SUBSTRING_CONTEXT]
    end = start + len(term)
    left = max(0, start - _SUBSTRING_CONTEXT)
    right = min(len(content), end + _SUBSTRING_CONTEXT)
    return (
        (SNIPPET_ELLIPSIS if left > 0 else "")
        + content[left:start]
        + SNIPPET_OPEN
        + content[start:end]
        + SNIPPET_CLOSE
        + content[end:right]
        + (SNIPPET_ELLIPSIS if right < len(content) else "")
    )


def search(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int,
    session_id: str | None,
    exclude_session_id: str | None,
    include_inactive: bool,
    identity: str | None = None,
) -> list[SearchHit]:
    """Best matches first. Never raises for any `query` text."""
    if not isinstance(query, str):
        return []
    # Lone surrogates cannot be bound as UTF-8; they become '?', which no term keeps.
    terms = query_terms(query.encode("utf-8", "replace").decode("utf-8"))
    if not terms or limit <= 0:
        return []
    where, params = _filters(session_id, exclude_session_id, include_inactive, identity)
    hits: list[SearchHit] = []
    try:
        rare = [term for term in terms if not is_common(conn, match_expression([term]))]
        rank_by = match_expression(rare) if rare else None
        rows = ranked_rows(conn, match_expression(terms), where, params, limit, rank_by)
    except sqlite3.OperationalError as exc:  # quoting makes this unreachable; stay safe anyway
        log.warning("full-text search failed for %r: %s", query[:200], exc)
        rows = []
    hits.extend(hit_from_row(row) for row in rows)
    if len(hits) < limit and any(_is_unsegmented(char) for term in terms for char in term):
        hits.extend(_substring_hits(conn, terms, limit - len(hits), hits, where, params))
    return hits


def is_common(conn: sqlite3.Connection, phrase: str) -> bool:
    """True when more than RANK_CAP messages match `phrase` (an FTS5 expression for one
    term); the count stops there, so this costs at most RANK_CAP index steps."""
    row = conn.execute(
        "SELECT COUNT(*) FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)",
        (phrase, RANK_CAP + 1),
    ).fetchone()
    return int(row[0]) > RANK_CAP


def ranked_rows(
    conn: sqlite3.Connection,
    expression: str,
    where: str,
    params: Sequence[object],
    limit: int,
    rank_by: str | None,
) -> list[sqlite3.Row]:
    """Rows (id, session_id, role, created_at, active, snip, score) matching
    `expression`: ranked by bm25 over `rank_by` (an expression of the query's rarer
    terms), or newest first with score 0 when `rank_by` is None.

    bm25 counts every row holding each of its terms (its IDF) whatever else limits the
    query, so a word in most messages would cost a pass over most of the index; such
    words still have to match, but only the rarer ones rank (see RANK_CAP)."""
    head = (
        "SELECT m.id, m.session_id, m.role, m.created_at, m.active, "
        f"snippet(messages_fts, 0, ?, ?, ?, {SNIPPET_TOKENS}) AS snip, "
    )
    marks = [SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS]
    if rank_by is None:
        sql = (
            head + "0.0 AS score FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            f"WHERE messages_fts MATCH ?{where} ORDER BY messages_fts.rowid DESC LIMIT ?"
        )
        return conn.execute(sql, [*marks, expression, *params, limit]).fetchall()
    also = ""
    extra: list[object] = []
    if rank_by != expression:  # the common words must match too
        also = " AND m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)"
        extra = [expression]
    sql = (
        head + "bm25(messages_fts) AS score "
        "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
        f"WHERE messages_fts MATCH ?{also}{where} ORDER BY score, m.id LIMIT ?"
    )
    return conn.execute(sql, [*marks, rank_by, *extra, *params, limit]).fetchall()


def scan_floor(conn: sqlite3.Connection) -> int:
    """Substring scans read messages with ids above this (see SUBSTRING_SCAN_ROWS)."""
    row = conn.execute("SELECT MAX(id) FROM messages").fetchone()
    return max(0, int(row[0] or 0) - SUBSTRING_SCAN_ROWS)


def hit_from_row(
    row: sqlite3.Row, *, snippet: str | None = None, rank: float | None = None
) -> SearchHit:
    """A hit from a message row (id, session_id, role, created_at, active); the snippet
    and rank come from the row's `snip` and `score` unless given."""
    return SearchHit(
        message_id=row["id"],
        session_id=row["session_id"],
        role=row["role"],
        snippet=(row["snip"] or "") if snippet is None else snippet,
        rank=float(row["score"]) if rank is None else rank,
        created_at=row["created_at"],
        active=bool(row["active"]),
    )


def _substring_hits(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    limit: int,
    found: Sequence[SearchHit],
    where: str,
    params: Sequence[object],
) -> list[SearchHit]:
    """Rows containing every term as a substring (newest first), minus `found`."""
    like = " AND ".join("m.content LIKE ? ESCAPE '\\'" for _ in terms)
    seen = [hit.message_id for hit in found]
    not_seen = f" AND m.id NOT IN ({', '.join('?' for _ in seen)})" if seen else ""
    sql = (
        "SELECT m.id, m.session_id, m.role, m.created_at, m.active, m.content FROM messages m "
        f"WHERE m.id > ? AND m.content IS NOT NULL AND {like}{where}{not_seen}"
        " ORDER BY m.id DESC LIMIT ?"
    )
    patterns = [f"%{_escape_like(term)}%" for term in terms]
    args = [scan_floor(conn), *patterns, *params, *seen, limit]
    try:
        rows = conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        log.warning("substring search failed: %s", exc)
        return []
    anchor = next(t for t in terms if any(_is_unsegmented(c) for c in t))
    return [
        hit_from_row(row, snippet=_substring_snippet(row["content"], anchor), rank=0.0)
        for row in rows
    ]
