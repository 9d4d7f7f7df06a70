"""Read-only reports over state.db: spend and tokens grouped by day, model, source or
session; sessions per source; the chats a gateway platform holds.

Shared by `herald usage`, `/usage` and the web dashboard so every surface counts
the same way. Costs are the per-call estimates recorded in ``usage``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from typing import Any, Literal

Grouping = Literal["day", "model", "source", "session", "kind"]

_GROUP_SQL: dict[str, str] = {
    "day": "strftime('%Y-%m-%d', u.created_at, 'unixepoch', 'localtime')",
    "model": "u.provider || '/' || u.model",
    "source": "s.source",
    "session": "u.session_id",
    "kind": "u.kind",
}


@dataclass(frozen=True)
class UsageRow:
    key: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float

    @property
    def cache_hit_rate(self) -> float:
        """Share of prompt tokens served from the provider's cache."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cache_hit_rate": round(self.cache_hit_rate, 4)}


def usage_by(
    conn: sqlite3.Connection,
    group: Grouping,
    *,
    since: float | None = None,
    session_id: str | None = None,
    limit: int = 400,
) -> list[UsageRow]:
    """Usage rows grouped by ``group``, newest day first for days, costliest first else."""
    if group not in _GROUP_SQL:
        raise ValueError(f"unknown grouping {group!r}; use one of {', '.join(_GROUP_SQL)}")
    key = _GROUP_SQL[group]
    clauses, params = ["1 = 1"], []
    if since is not None:
        clauses.append("u.created_at >= ?")
        params.append(since)
    if session_id is not None:
        clauses.append("u.session_id = ?")
        params.append(session_id)
    order = "key DESC" if group == "day" else "cost_usd DESC, prompt DESC"
    rows = conn.execute(
        f"SELECT {key} AS key, COUNT(*) AS calls,"
        " SUM(u.prompt_tokens) AS prompt, SUM(u.completion_tokens), SUM(u.cache_read_tokens),"
        " SUM(u.cache_write_tokens), SUM(u.cost_usd) AS cost_usd"
        " FROM usage u JOIN sessions s ON s.id = u.session_id"
        f" WHERE {' AND '.join(clauses)} GROUP BY key ORDER BY {order} LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [
        UsageRow(str(r[0]), int(r[1]), int(r[2] or 0), int(r[3] or 0), int(r[4] or 0),
                 int(r[5] or 0), float(r[6] or 0.0))
        for r in rows
    ]  # fmt: skip


def usage_total(
    conn: sqlite3.Connection, *, since: float | None = None, session_id: str | None = None
) -> UsageRow:
    clauses, params = ["1 = 1"], []
    if since is not None:
        clauses.append("created_at >= ?")
        params.append(since)
    if session_id is not None:
        clauses.append("session_id = ?")
        params.append(session_id)
    r = conn.execute(
        "SELECT COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cache_read_tokens),"
        f" SUM(cache_write_tokens), SUM(cost_usd) FROM usage WHERE {' AND '.join(clauses)}",
        params,
    ).fetchone()
    return UsageRow("total", int(r[0]), int(r[1] or 0), int(r[2] or 0), int(r[3] or 0),
                    int(r[4] or 0), float(r[5] or 0.0))  # fmt: skip


def sessions_by_source(conn: sqlite3.Connection) -> dict[str, int]:
    rows = conn.execute(
        "SELECT source, COUNT(*) FROM sessions GROUP BY source ORDER BY COUNT(*) DESC"
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


@dataclass(frozen=True)
class PlatformChat:
    """A gateway chat and the session it is bound to."""

    session_key: str
    session_id: str
    title: str | None
    updated_at: float
    estimated_cost_usd: float


def platform_chats(
    conn: sqlite3.Connection, platform: str, *, profile: str | None = None, limit: int = 100
) -> list[PlatformChat]:
    """Chats of ``platform`` from the gateway's session bindings, most recent first."""
    escaped = platform.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"agent:{profile or '%'}:{escaped}:%"
    rows = conn.execute(
        "SELECT g.session_key, g.session_id, s.title, s.updated_at, s.estimated_cost_usd"
        " FROM gateway_sessions g JOIN sessions s ON s.id = g.session_id"
        " WHERE g.session_key LIKE ? ESCAPE '\\' ORDER BY s.updated_at DESC LIMIT ?",
        (pattern, limit),
    ).fetchall()
    return [PlatformChat(str(r[0]), str(r[1]), r[2], float(r[3]), float(r[4])) for r in rows]


__all__ = [
    "Grouping",
    "PlatformChat",
    "SessionUsage",
    "UsageRow",
    "local_day_start",
    "platform_chats",
    "session_for_key",
    "session_usage",
    "sessions_by_source",
    "usage_by",
    "usage_total",
]


def session_for_key(conn: sqlite3.Connection, session_key: str) -> str | None:
    """The session a gateway session key is bound to, if any."""
    row = conn.execute(
        "SELECT session_id FROM gateway_sessions WHERE session_key = ?", (session_key,)
    ).fetchone()
    return str(row[0]) if row else None


@dataclass(frozen=True)
class SessionUsage:
    """One session with its sub-agents and background reviews: what `/usage` shows."""

    session_id: str
    total: UsageRow
    by_kind: list[UsageRow]  # main, summary, review, subagent, ...
    today: UsageRow  # every session, since local midnight
    last_request: dict[str, int] | None  # the newest main call's request split
    prefix_breaks: dict[str, int]  # cause -> requests whose reused prefix broke

    def lines(self) -> list[str]:
        t = self.total
        kinds = ", ".join(f"{r.key} ${r.cost_usd:.4f}" for r in self.by_kind) or "-"
        out = [
            f"spend: ${t.cost_usd:.4f} this session ({kinds}); today ${self.today.cost_usd:.4f}",
            f"model calls: {t.calls}",
            f"prompt tokens: {t.prompt_tokens:,} (cache read {t.cache_read_tokens:,}, "
            f"cache write {t.cache_write_tokens:,}; cache hit rate {t.cache_hit_rate:.0%})",
            f"completion tokens: {t.completion_tokens:,}",
        ]
        split = self.last_request
        if split and split.get("request_bytes"):
            total = split["request_bytes"]
            parts = ", ".join(
                f"{name} {split[f'{name}_bytes']:,}"
                for name in ("system", "tools", "history", "new")
            )
            out.append(f"last request: {total:,} bytes (~{total // 4:,} tokens): {parts}")
        if self.prefix_breaks:
            causes = "; ".join(f"{cause} ×{n}" for cause, n in self.prefix_breaks.items())
            out.append(f"cache prefix broke outside compression: {causes}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "total": self.total.to_dict(),
            "by_kind": [r.to_dict() for r in self.by_kind],
            "today": self.today.to_dict(),
            "last_request": self.last_request,
            "prefix_breaks": self.prefix_breaks,
        }


_TREE = (
    "WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT s.id FROM sessions s"
    " JOIN tree ON s.parent_id = tree.id)"
)


def session_usage(conn: sqlite3.Connection, session_id: str, *, today: float) -> SessionUsage:
    """The session and its descendants: totals, split by kind (a background review's
    calls count as kind ``review``), today's spend, the last request's split."""
    kind = "CASE WHEN u.session_id = ? THEN u.kind ELSE s.source END"
    rows = conn.execute(
        f"{_TREE} SELECT {kind} AS key, COUNT(*), SUM(u.prompt_tokens), SUM(u.completion_tokens),"
        " SUM(u.cache_read_tokens), SUM(u.cache_write_tokens), SUM(u.cost_usd)"
        " FROM usage u JOIN sessions s ON s.id = u.session_id"
        " WHERE u.session_id IN (SELECT id FROM tree) GROUP BY key ORDER BY SUM(u.cost_usd) DESC",
        (session_id, session_id),
    ).fetchall()
    by_kind = [
        UsageRow(str(r[0]), int(r[1]), int(r[2] or 0), int(r[3] or 0), int(r[4] or 0),
                 int(r[5] or 0), float(r[6] or 0.0))
        for r in rows
    ]  # fmt: skip
    total = UsageRow(
        "total",
        *(sum(getattr(r, f) for r in by_kind) for f in (
            "calls", "prompt_tokens", "completion_tokens", "cache_read_tokens",
            "cache_write_tokens")),
        sum(r.cost_usd for r in by_kind),
    )  # fmt: skip
    last = conn.execute(
        "SELECT request_bytes, system_bytes, tools_bytes, history_bytes, new_bytes FROM usage"
        " WHERE session_id = ? AND kind != 'summary' ORDER BY id DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    split = (
        dict(zip(("request_bytes", "system_bytes", "tools_bytes", "history_bytes", "new_bytes"),
                 map(int, last), strict=True))
        if last else None
    )  # fmt: skip
    breaks = conn.execute(
        "SELECT prefix_break, COUNT(*) FROM usage WHERE session_id = ? AND prefix_break IS NOT NULL"
        " GROUP BY prefix_break ORDER BY COUNT(*) DESC",
        (session_id,),
    ).fetchall()
    return SessionUsage(
        session_id,
        total,
        by_kind,
        usage_total(conn, since=today),
        split,
        {str(r[0]): int(r[1]) for r in breaks},
    )


def local_day_start(now: float | None = None) -> float:
    """Epoch seconds of the last local midnight (the `daily` caps' period)."""
    import time

    t = time.localtime(time.time() if now is None else now)
    return time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0, 0, 0, -1))
