"""Looser searches for when the strict one (every term, `herald.state.search`) finds
too little: long pasted queries, partial words, and CJK text written differently.

- any-term: the terms OR-ed, each still a quoted FTS5 string (so operators stay
  words); terms of four or more letters also match as prefixes ("migrat" finds
  "migration"). bm25 ranks rows matching more terms first.
- trigrams: runs of unsegmented script (Chinese, Japanese, Korean, Thai) are cut
  into overlapping three-character pieces, and rows containing the most pieces
  win, so 数据库迁移 still finds 数据库的迁移. This is a substring scan (the FTS5
  index cannot see inside such runs); it runs only for queries in those scripts.

Like the strict search, nothing here raises for any query text.
"""

from __future__ import annotations

import logging
import math
import sqlite3
from collections.abc import Sequence

from herald.state.records import SearchHit
from herald.state.search import (
    SNIPPET_CLOSE,
    SNIPPET_ELLIPSIS,
    SNIPPET_OPEN,
    _is_unsegmented,
    hit_from_row,
    is_common,
    query_terms,
    ranked_rows,
    scan_floor,
)

log = logging.getLogger(__name__)

MIN_PREFIX_CHARS = 4
MAX_GRAMS = 24
_CONTEXT = 40


def _clean(query: str) -> str:
    # Lone surrogates cannot be bound as UTF-8; NUL would end an FTS5 string early.
    return query.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def any_term_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH string matching rows with any of `terms`."""
    parts: list[str] = []
    for term in terms:
        prefix = (
            term.isalnum()
            and len(term) >= MIN_PREFIX_CHARS
            and not any(_is_unsegmented(c) for c in term)
        )
        parts.append(_quoted(term) + (" *" if prefix else ""))
    return " OR ".join(parts)


def grams(query: str) -> list[str]:
    """Distinct overlapping trigrams of the query's unsegmented runs (a run of two
    characters is kept whole)."""
    runs: list[str] = []
    current = ""
    for char in query:
        if _is_unsegmented(char) and char.isalnum():
            current += char
        else:
            if current:
                runs.append(current)
            current = ""
    if current:
        runs.append(current)
    out: list[str] = []
    for run in runs:
        pieces = [run] if len(run) <= 3 else [run[i : i + 3] for i in range(len(run) - 2)]
        for piece in pieces:
            if len(piece) >= 2 and piece not in out:
                out.append(piece)
    return out[:MAX_GRAMS]


def _filters(
    exclude_session_id: str | None, exclude_ids: Sequence[int], identity: str | None = None
) -> tuple[str, list]:
    where, params = "", []
    if identity is not None:  # only that identity's messages (invariant 19)
        where += " AND m.identity = ?"
        params.append(identity)
    if exclude_session_id is not None:
        where += " AND m.session_id != ?"
        params.append(exclude_session_id)
    if exclude_ids:
        where += f" AND m.id NOT IN ({', '.join('?' for _ in exclude_ids)})"
        params.extend(exclude_ids)
    return where, params


def any_term_search(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int,
    exclude_session_id: str | None = None,
    exclude_ids: Sequence[int] = (),
    identity: str | None = None,
) -> list[SearchHit]:
    terms = query_terms(_clean(query)) if isinstance(query, str) else []
    if not terms or limit <= 0:
        return []
    where, params = _filters(exclude_session_id, exclude_ids, identity)
    try:
        rare = [term for term in terms if not _common(conn, term)]
        # Any word may match, so a common one would make most messages matches: when
        # rarer words remain, the common ones are left out (they would rank low anyway);
        # a query of only common words lists the newest messages with any of them.
        expression = any_term_expression(rare or terms)
        rows = ranked_rows(conn, expression, where, params, limit, expression if rare else None)
    except sqlite3.OperationalError as exc:  # quoting makes this unreachable; stay safe
        log.warning("any-term search failed for %r: %s", query[:200], exc)
        return []
    return [hit_from_row(row) for row in rows]


def _common(conn: sqlite3.Connection, term: str) -> bool:
    """Whether `term` (with its prefix matches) is in more than RANK_CAP messages; the
    plain word is counted first, as its prefix matches are a superset (and slower)."""
    plain = any_term_expression([term]).removesuffix(" *")
    if is_common(conn, plain):
        return True
    expression = any_term_expression([term])
    return expression != plain and is_common(conn, expression)


def _snippet(content: str, pieces: Sequence[str]) -> str:
    start = -1
    piece = ""
    for piece in pieces:
        start = content.find(piece)
        if start >= 0:
            break
    if start < 0:
        return content[: 2 * _CONTEXT]
    end = start + len(piece)
    left, right = max(0, start - _CONTEXT), min(len(content), end + _CONTEXT)
    return (
        (SNIPPET_ELLIPSIS if left else "")
        + content[left:start]
        + SNIPPET_OPEN
        + content[start:end]
        + SNIPPET_CLOSE
        + content[end:right]
        + (SNIPPET_ELLIPSIS if right < len(content) else "")
    )


def trigram_search(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int,
    exclude_session_id: str | None = None,
    exclude_ids: Sequence[int] = (),
    identity: str | None = None,
) -> list[SearchHit]:
    """Rows sharing the most trigrams with the query's CJK/Thai runs (a third of the
    pieces at least), best first."""
    pieces = grams(_clean(query)) if isinstance(query, str) else []
    if not pieces or limit <= 0:
        return []
    where, params = _filters(exclude_session_id, exclude_ids, identity)
    # Pieces are runs of scripts without letter case, so a plain substring test (instr,
    # several times faster than LIKE) finds exactly what LIKE would.
    like = "instr(m.content, ?) > 0"
    score = " + ".join(f"(CASE WHEN {like} THEN 1 ELSE 0 END)" for _ in pieces)
    patterns = list(pieces)
    sql = (
        "SELECT * FROM (SELECT m.id, m.session_id, m.role, m.created_at, m.active, m.content, "
        f"{score} AS matched FROM messages m WHERE m.id > ? AND m.content IS NOT NULL"
        f" AND ({' OR '.join(like for _ in pieces)}){where})"
        " WHERE matched >= ? ORDER BY matched DESC, id DESC LIMIT ?"
    )
    needed = max(1, math.ceil(len(pieces) / 3))
    try:
        floor = scan_floor(conn)
        rows = conn.execute(sql, [*patterns, floor, *patterns, *params, needed, limit]).fetchall()
    except sqlite3.OperationalError as exc:
        log.warning("trigram search failed: %s", exc)
        return []
    return [
        hit_from_row(
            row, snippet=_snippet(row["content"], pieces), rank=-float(row["matched"]) / len(pieces)
        )
        for row in rows
    ]
