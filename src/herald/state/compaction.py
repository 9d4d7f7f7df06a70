"""Planning `archive_and_compact`: which rows may be replaced, and where the
replacement rows go so active history reads head + replacement + tail."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Sequence

from herald.state.errors import StateError


def check_replace_ids(replace_ids: Sequence[int]) -> list[int]:
    ids = list(replace_ids)
    if not ids:
        raise ValueError("replace_ids is empty: name the active messages to archive")
    if any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
        raise ValueError("replace_ids must be message ids (ints)")
    if len(set(ids)) != len(ids):
        raise ValueError("replace_ids contains duplicates")
    return ids


def positions_between(lo: float, hi: float, count: int) -> list[float]:
    """`count` increasing positions strictly between lo and hi."""
    step = (hi - lo) / (count + 1)
    positions = [lo + step * (index + 1) for index in range(count)]
    bounds = [lo, *positions, hi]
    if any(a >= b for a, b in itertools.pairwise(bounds)):
        raise StateError(
            "no room left between the neighbouring messages to insert the replacement "
            "(float positions exhausted after many nested compactions of the same span)"
        )
    return positions


def plan_replacement(
    conn: sqlite3.Connection, sid: str, ids: Sequence[int], count: int
) -> list[float]:
    """Positions for `count` replacement rows, after validating that `ids` is a
    contiguous run of the session's active rows (ValueError saying why not)."""
    active = conn.execute(
        "SELECT id, position FROM messages WHERE session_id = ? AND active = 1"
        " ORDER BY position, seq",
        (sid,),
    ).fetchall()
    index = {row["id"]: i for i, row in enumerate(active)}
    missing = [i for i in ids if i not in index]
    if missing:
        raise ValueError(_why_not_active(conn, sid, missing))
    indices = sorted(index[i] for i in ids)
    first, last = indices[0], indices[-1]
    if last - first + 1 != len(indices):
        wanted = set(ids)
        between = [active[i]["id"] for i in range(first, last + 1) if active[i]["id"] not in wanted]
        raise ValueError(
            f"replace_ids is not a contiguous run of active messages: active message(s) "
            f"{between} lie between them; include them or split the compaction"
        )
    # Without a neighbour on one side, any bound beyond the replaced run works.
    lo = active[first - 1]["position"] if first > 0 else active[first]["position"] - 1.0
    hi = active[last + 1]["position"] if last + 1 < len(active) else active[last]["position"] + 1.0
    return positions_between(lo, hi, count)


def _why_not_active(conn: sqlite3.Connection, sid: str, missing: Sequence[int]) -> str:
    rows = conn.execute(
        f"SELECT id, session_id FROM messages WHERE id IN ({', '.join('?' for _ in missing)})",
        list(missing),
    ).fetchall()
    owner = {row["id"]: row["session_id"] for row in rows}
    reasons = []
    for message_id in missing:
        if message_id not in owner:
            reasons.append(f"{message_id} does not exist")
        elif owner[message_id] != sid:
            reasons.append(f"{message_id} belongs to session {owner[message_id]!r}")
        else:
            reasons.append(f"{message_id} is already archived")
    return f"replace_ids must be active messages of session {sid!r}: " + "; ".join(reasons)
