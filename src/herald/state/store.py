"""`StateStore`: the one object that reads and writes state.db.

Writes go through a single connection per store, serialized by a lock and
wrapped in short `BEGIN IMMEDIATE` transactions, so other processes opening
the same file queue behind the WAL write lock (busy timeout) instead of
failing. Reads use a small pool of read-only connections and never block on
the writer.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import herald.state.history as history
import herald.state.search as fts
import herald.state.search_fallback as fallback
import herald.state.search_vectors as vectors
from herald.state.compaction import check_replace_ids, plan_replacement
from herald.state.connection import ReaderPool, enable_wal, is_busy, open_connection
from herald.state.errors import StateError
from herald.state.history import Lineage, SessionSlice, SessionSummary
from herald.state.messages import NewMessage, normalize_message
from herald.state.premigration import migrate_keeping_a_copy
from herald.state.records import SearchHit, SessionRecord, StoredMessage, UsageRecord
from herald.state.schema import check_not_newer, read_version
from herald.state.spend import Spent, claim_warning, spent_since

T = TypeVar("T")

_UPDATABLE_FIELDS = frozenset(
    {"title", "model", "provider", "system_prompt_hash", "last_exit_reason", "parent_id", "meta"}
)
_USAGE_COUNTERS = (
    "prompt_tokens",
    "completion_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_calls",
)


def new_session_id(now: float | None = None) -> str:
    """`YYYYMMDD-HHMMSS-<6 hex>` in UTC: sorts by creation time."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{secrets.token_hex(3)}"


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return value


def _cost(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return float(value)


class StateStore:
    """Sessions, append-only messages (FTS5-indexed), system prompts and usage
    in one SQLite file. Safe to share between threads; several processes may
    open the same file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        writer = open_connection(self.path)
        try:
            # Refuse a newer file before anything (even the WAL switch) touches it.
            check_not_newer(read_version(writer), self.path)
            enable_wal(writer, self.path)
            self._schema_version = migrate_keeping_a_copy(writer, self.path)
        except sqlite3.DatabaseError as exc:
            writer.close()
            if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
                raise StateError(
                    f"{self.path} stayed locked by another Herald process; try again"
                ) from exc
            raise StateError(f"{self.path} is not a usable Herald state database: {exc}") from exc
        except BaseException:
            writer.close()
            raise
        self._writer: sqlite3.Connection | None = writer
        self._readers = ReaderPool(self.path)

    # -- lifecycle ---------------------------------------------------------

    @property
    def schema_version(self) -> int:
        return self._schema_version

    def close(self) -> None:
        with self._write_lock:
            writer, self._writer = self._writer, None
        self._readers.close()
        if writer is not None:
            writer.close()

    def __enter__(self) -> StateStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"StateStore({str(self.path)!r})"

    # -- transactions ------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            conn = self._writer
            if conn is None:
                raise StateError("the state store is closed")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                if is_busy(exc):
                    raise StateError(
                        f"{self.path} stayed locked by another Herald process; try again"
                    ) from exc
                raise

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._readers.connection() as conn:
            return conn.execute(sql, params).fetchall()

    @staticmethod
    def _require_session(conn: sqlite3.Connection, sid: str) -> None:
        if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchall():
            raise StateError(f"unknown session {sid!r}")

    @staticmethod
    def _touch(conn: sqlite3.Connection, sid: str) -> None:
        conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (time.time(), sid))

    # -- sessions ----------------------------------------------------------

    def create_session(
        self,
        *,
        profile: str = "default",
        source: str = "cli",
        model: str | None = None,
        provider: str | None = None,
        parent_id: str | None = None,
        title: str | None = None,
        identity: str = "owner",
    ) -> str:
        if not profile or not source or not identity:
            raise ValueError("profile, source and identity must be non-empty strings")
        with self._transaction() as conn:
            if parent_id is not None:
                self._require_session(conn, parent_id)
            now = time.time()
            sid = new_session_id(now)
            while conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchall():
                sid = new_session_id(now)
            conn.execute(
                "INSERT INTO sessions (id, profile, source, title, model, provider, parent_id,"
                " created_at, updated_at, identity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, profile, source, title, model, provider, parent_id, now, now, identity),
            )
        return sid

    def get_session(self, sid: str) -> SessionRecord | None:
        rows = self._read("SELECT * FROM sessions WHERE id = ?", (sid,))
        return SessionRecord.from_row(rows[0]) if rows else None

    def resolve_session_id(self, prefix: str) -> str:
        """The one session whose id starts or ends with `prefix` (the date part or the
        hex tail); an exact id always wins. Ambiguity names the sessions that match."""
        prefix = prefix.strip()
        if not prefix:
            raise StateError("no session id given")
        if self._read("SELECT 1 FROM sessions WHERE id = ?", (prefix,)):
            return prefix
        # Prefix: a range scan on the primary key (U+10FFFF sorts after every character).
        # Suffix: a scan, but of ids only; these are typed by people, not in loops.
        rows = self._read(
            "SELECT id, title FROM sessions WHERE (id >= ? AND id < ?) OR substr(id, -?) = ?"
            " ORDER BY id LIMIT 6",
            (prefix, prefix + chr(0x10FFFF), len(prefix), prefix),
        )
        if not rows:
            raise StateError(f"no session id starts with {prefix!r} or ends with it")
        if len(rows) > 1:
            shown = "; ".join(f"{row['id']} ({row['title'] or 'untitled'})" for row in rows[:5]) + (
                "; …" if len(rows) > 5 else ""
            )
            raise StateError(
                f"session id {prefix!r} is ambiguous, it matches: {shown}. "
                "Type more of the id (its last characters are unique)."
            )
        return rows[0]["id"]

    def list_sessions(
        self,
        *,
        limit: int = 50,
        source: str | None = None,
        profile: str | None = None,
        exclude_sources: tuple[str, ...] = (),
        identity: str | None = None,
    ) -> list[SessionRecord]:
        clauses, params = ["1 = 1"], []
        if identity is not None:
            clauses.append("identity = ?")
            params.append(identity)
        if source is not None:
            clauses.append("source = ?")
            params.append(source)
        if exclude_sources:
            clauses.append(f"source NOT IN ({', '.join('?' for _ in exclude_sources)})")
            params.extend(exclude_sources)
        if profile is not None:
            clauses.append("profile = ?")
            params.append(profile)
        rows = self._read(
            f"SELECT * FROM sessions WHERE {' AND '.join(clauses)}"
            " ORDER BY updated_at DESC, id DESC LIMIT ?",
            [*params, max(0, limit)],
        )
        return [SessionRecord.from_row(row) for row in rows]

    def count_sessions(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM sessions")[0][0])

    def update_session(self, sid: str, **fields: Any) -> None:
        unknown = sorted(set(fields) - _UPDATABLE_FIELDS)
        if unknown:
            raise ValueError(
                f"cannot update session field(s) {unknown}; updatable: {sorted(_UPDATABLE_FIELDS)}"
            )
        values: dict[str, Any] = {}
        for name, value in fields.items():
            if name == "meta":
                if value is not None and not isinstance(value, Mapping):
                    raise ValueError(f"meta must be a dict, got {type(value).__name__}")
                try:
                    values[name] = json.dumps(dict(value or {}), ensure_ascii=False)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"meta is not JSON-serializable: {exc}") from exc
            elif value is not None and not isinstance(value, str):
                raise ValueError(f"{name} must be a string or None, got {type(value).__name__}")
            else:
                values[name] = value
        with self._transaction() as conn:
            self._require_session(conn, sid)
            parent = values.get("parent_id")
            if parent is not None:
                self._check_parent(conn, sid, parent)
            prompt_hash = values.get("system_prompt_hash")
            if (
                prompt_hash is not None
                and not conn.execute(
                    "SELECT 1 FROM system_prompts WHERE hash = ?", (prompt_hash,)
                ).fetchall()
            ):
                raise ValueError(
                    f"unknown system prompt hash {prompt_hash!r}; store the text with "
                    "put_system_prompt() first"
                )
            assignments = [f"{name} = ?" for name in values] + ["updated_at = ?"]
            conn.execute(
                f"UPDATE sessions SET {', '.join(assignments)} WHERE id = ?",
                [*values.values(), time.time(), sid],
            )

    def _check_parent(self, conn: sqlite3.Connection, sid: str, parent: str) -> None:
        self._require_session(conn, parent)
        ancestors = conn.execute(
            "WITH RECURSIVE lineage(id) AS (SELECT ? UNION SELECT s.parent_id FROM sessions s"
            " JOIN lineage l ON s.id = l.id WHERE s.parent_id IS NOT NULL)"
            " SELECT 1 FROM lineage WHERE id = ?",
            (parent, sid),
        ).fetchall()
        if ancestors:
            raise ValueError(f"session {parent!r} descends from {sid!r}: lineage cannot loop")

    def add_session_usage(
        self,
        sid: str,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: int = 0,
        api_calls: int = 0,
        cost_usd: float = 0.0,
    ) -> None:
        given = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "cache_read_tokens": cache_read_tokens,
            "cache_write_tokens": cache_write_tokens,
            "reasoning_tokens": reasoning_tokens,
            "api_calls": api_calls,
        }
        counts = [_count(name, given[name]) for name in _USAGE_COUNTERS]
        cost = _cost("cost_usd", cost_usd)
        assignments = ", ".join(f"{name} = {name} + ?" for name in _USAGE_COUNTERS)
        with self._transaction() as conn:
            cursor = conn.execute(
                f"UPDATE sessions SET {assignments}, estimated_cost_usd = estimated_cost_usd + ?,"
                " updated_at = ? WHERE id = ?",
                [*counts, cost, time.time(), sid],
            )
            if cursor.rowcount == 0:
                raise StateError(f"unknown session {sid!r}")

    # -- messages ----------------------------------------------------------

    def append_message(
        self, sid: str, message: Mapping[str, Any], *, api_content: str | None = None
    ) -> StoredMessage:
        new = normalize_message(message, api_content=api_content)
        with self._transaction() as conn:
            return self._insert(conn, sid, [new])[0]

    def append_messages(
        self, sid: str, messages: Sequence[Mapping[str, Any]]
    ) -> list[StoredMessage]:
        batch = [normalize_message(message) for message in messages]
        with self._transaction() as conn:
            return self._insert(conn, sid, batch)

    def _insert(
        self,
        conn: sqlite3.Connection,
        sid: str,
        batch: Sequence[NewMessage],
        positions: Sequence[float] | None = None,
    ) -> list[StoredMessage]:
        self._require_session(conn, sid)
        # One MAX per query: SQLite answers a lone MAX over an indexed column with a
        # single index seek, but two aggregates in one SELECT scan every row of the
        # session - which made each append O(session) and a long history O(n²).
        last_seq, last_position = conn.execute(
            "SELECT (SELECT MAX(seq) FROM messages WHERE session_id = ?1),"
            " (SELECT MAX(position) FROM messages WHERE session_id = ?1)",
            (sid,),
        ).fetchall()[0]
        last_seq, last_position = last_seq or 0, last_position or 0.0
        if positions is None:
            positions = [last_position + index + 1.0 for index in range(len(batch))]
        now = time.time()
        stored: list[StoredMessage] = []
        for offset, (new, position) in enumerate(zip(batch, positions, strict=True)):
            seq = last_seq + offset + 1
            cursor = conn.execute(
                "INSERT INTO messages (session_id, seq, position, role, content, tool_calls,"
                " tool_call_id, tool_name, reasoning, api_content, created_at, provenance,"
                " identity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " (SELECT identity FROM sessions WHERE id = ?1))",
                (
                    sid,
                    seq,
                    position,
                    new.role,
                    new.content,
                    new.tool_calls_json,
                    new.tool_call_id,
                    new.tool_name,
                    new.reasoning,
                    new.api_content,
                    now,
                    new.provenance,
                ),
            )
            stored.append(
                StoredMessage(
                    id=int(cursor.lastrowid or 0),
                    session_id=sid,
                    seq=seq,
                    position=float(position),
                    role=new.role,
                    content=new.content,
                    tool_calls=json.loads(new.tool_calls_json) if new.tool_calls_json else None,
                    tool_call_id=new.tool_call_id,
                    tool_name=new.tool_name,
                    reasoning=new.reasoning,
                    api_content=new.api_content,
                    active=True,
                    compacted=False,
                    created_at=now,
                    provenance=new.provenance,
                )
            )
        self._touch(conn, sid)
        return stored

    def get_messages(self, sid: str, *, include_inactive: bool = False) -> list[StoredMessage]:
        if include_inactive:
            sql = "SELECT * FROM messages WHERE session_id = ? ORDER BY seq"
        else:
            sql = (
                "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY position, seq"
            )
        return [StoredMessage.from_row(row) for row in self._read(sql, (sid,))]

    def count_messages(self, sid: str, *, include_inactive: bool = False) -> int:
        active = "" if include_inactive else " AND active = 1"
        rows = self._read(f"SELECT COUNT(*) FROM messages WHERE session_id = ?{active}", (sid,))
        return int(rows[0][0])

    def newest_message_id(self, sid: str) -> int | None:
        """The id of the session's most recently written row (active or not), None if it
        has none: a holder of the session's history compares it with the newest row it
        knows to tell whether someone else wrote since (one index probe)."""
        rows = self._read(
            "SELECT id FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT 1", (sid,)
        )
        return int(rows[0][0]) if rows else None

    def archive_and_compact(
        self, sid: str, replace_ids: Sequence[int], new_messages: Sequence[Mapping[str, Any]]
    ) -> list[StoredMessage]:
        """Archive a contiguous run of active rows and put `new_messages` in its
        place, in one transaction. Archived rows stay stored and searchable."""
        ids = check_replace_ids(replace_ids)
        batch = [normalize_message(message) for message in new_messages]
        with self._transaction() as conn:
            self._require_session(conn, sid)
            positions = plan_replacement(conn, sid, ids, len(batch))
            conn.execute(
                f"UPDATE messages SET active = 0, compacted = 1"
                f" WHERE id IN ({', '.join('?' for _ in ids)})",
                ids,
            )
            if not batch:
                self._touch(conn, sid)
                return []
            return self._insert(conn, sid, batch, positions)

    # -- system prompts ----------------------------------------------------

    def put_system_prompt(self, text: str) -> str:
        if not isinstance(text, str):
            raise ValueError(f"a system prompt must be a string, got {type(text).__name__}")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO system_prompts (hash, text, created_at) VALUES (?, ?, ?)",
                (digest, text, time.time()),
            )
        return digest

    def get_system_prompt(self, hash: str) -> str | None:
        rows = self._read("SELECT text FROM system_prompts WHERE hash = ?", (hash,))
        return rows[0]["text"] if rows else None

    # -- usage -------------------------------------------------------------

    def record_usage(
        self,
        sid: str,
        *,
        provider: str,
        model: str,
        api_mode: str = "",
        kind: str = "main",
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: int = 0,
        cost_usd: float = 0.0,
        duration_ms: float = 0,
        finish_reason: str | None = None,
        request_bytes: int = 0,
        system_bytes: int = 0,
        tools_bytes: int = 0,
        history_bytes: int = 0,
        new_bytes: int = 0,
        prefix_break: str | None = None,
    ) -> None:
        row = (
            sid,
            time.time(),
            provider,
            model,
            api_mode,
            kind,
            _count("prompt_tokens", prompt_tokens),
            _count("completion_tokens", completion_tokens),
            _count("cache_read_tokens", cache_read_tokens),
            _count("cache_write_tokens", cache_write_tokens),
            _count("reasoning_tokens", reasoning_tokens),
            _cost("cost_usd", cost_usd),
            _count("duration_ms", round(duration_ms)),
            finish_reason,
            _count("request_bytes", request_bytes),
            _count("system_bytes", system_bytes),
            _count("tools_bytes", tools_bytes),
            _count("history_bytes", history_bytes),
            _count("new_bytes", new_bytes),
            prefix_break,
        )
        with self._transaction() as conn:
            self._require_session(conn, sid)
            conn.execute(
                "INSERT INTO usage (session_id, created_at, provider, model, api_mode, kind,"
                " prompt_tokens, completion_tokens, cache_read_tokens, cache_write_tokens,"
                " reasoning_tokens, cost_usd, duration_ms, finish_reason, request_bytes,"
                " system_bytes, tools_bytes, history_bytes, new_bytes, prefix_break)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def list_usage(self, sid: str) -> list[UsageRecord]:
        rows = self._read("SELECT * FROM usage WHERE session_id = ? ORDER BY id", (sid,))
        return [UsageRecord.from_row(row) for row in rows]

    # -- spend caps --------------------------------------------------------

    def spent_since(
        self,
        since: float | None = None,
        *,
        session_id: str | None = None,
        source: str | None = None,
    ) -> Spent:
        """Cost and tokens since ``since``, for a session's lineage or a source if given."""
        return self.report(spent_since, since, session_id=session_id, source=source)

    def claim_spend_warning(self, cap: str, period: str, threshold: float) -> bool:
        """True only the first time this warning is claimed, across processes."""
        with self._transaction() as conn:
            return claim_warning(conn, cap, period, threshold)

    # -- reports -----------------------------------------------------------

    def report(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a read-only report from `herald.state.reports` on a reader connection."""
        with self._readers.connection() as conn:
            return fn(conn, *args, **kwargs)

    # -- search ------------------------------------------------------------

    def search_messages(
        self,
        query: str,
        *,
        limit: int = 20,
        session_id: str | None = None,
        exclude_session_id: str | None = None,
        include_inactive: bool = True,
        identity: str | None = None,
    ) -> list[SearchHit]:
        """`identity`: only that identity's messages (None: everyone's)."""
        with self._readers.connection() as conn:
            return fts.search(
                conn,
                query,
                limit=limit,
                session_id=session_id,
                exclude_session_id=exclude_session_id,
                include_inactive=include_inactive,
                identity=identity,
            )

    # -- history (session search) ---------------------------------------------

    def search_messages_relaxed(
        self,
        query: str,
        *,
        limit: int = 20,
        exclude_session_id: str | None = None,
        exclude_ids: Sequence[int] = (),
        identity: str | None = None,
    ) -> list[SearchHit]:
        """Any-term (with prefixes) then CJK trigram matches, for when `search_messages`
        (every term) finds too little. Never raises for any `query` text."""
        with self._readers.connection() as conn:
            hits = fallback.any_term_search(
                conn, query, limit=limit, exclude_session_id=exclude_session_id,
                exclude_ids=exclude_ids, identity=identity,
            )  # fmt: skip
            seen = [*exclude_ids, *(hit.message_id for hit in hits)]
            return hits + fallback.trigram_search(
                conn, query, limit=limit - len(hits), exclude_session_id=exclude_session_id,
                exclude_ids=seen, identity=identity,
            )  # fmt: skip

    def replies(self, message_ids: Sequence[int], identity: str | None = None) -> dict[int, int]:
        """Message id -> the id of the reply to it (see `herald.state.history.replies`)."""
        with self._readers.connection() as conn:
            return history.replies(conn, message_ids, identity)

    def identities_among(self, names: Sequence[str]) -> set[str]:
        """Those of `names` that are the identity of some session (who speaks here)."""
        with self._readers.connection() as conn:
            return history.identities_among(conn, names)

    def get_message(self, message_id: int) -> StoredMessage | None:
        with self._readers.connection() as conn:
            return history.message_by_id(conn, message_id)

    def get_message_window(
        self, sid: str, around_id: int, *, before: int = 5, after: int = 5
    ) -> list[StoredMessage]:
        """Message `around_id` of session `sid` with its neighbours (see
        `herald.state.history.message_window` for how archived rows are shown)."""
        with self._readers.connection() as conn:
            anchor = history.message_by_id(conn, around_id)
            if anchor is None or anchor.session_id != sid:
                raise StateError(f"session {sid!r} has no message {around_id}")
            return history.message_window(conn, anchor, before, after)

    def get_session_slice(self, sid: str, *, head: int = 20, tail: int = 20) -> SessionSlice:
        with self._readers.connection() as conn:
            return history.session_slice(conn, sid, head, tail)

    def session_lineages(self, sids: Sequence[str]) -> dict[str, Lineage]:
        with self._readers.connection() as conn:
            return history.lineages(conn, sids)

    def recent_sessions(
        self, *, limit: int = 10, exclude: Sequence[str] = (), identity: str | None = None
    ) -> list[SessionSummary]:
        """Sessions with messages, most recently updated first, with counts."""
        with self._readers.connection() as conn:
            return history.recent_sessions(conn, limit=limit, exclude=exclude, identity=identity)

    def summarize_sessions(self, sids: Sequence[str]) -> list[SessionSummary]:
        with self._readers.connection() as conn:
            sessions = [
                SessionRecord.from_row(row)
                for sid in dict.fromkeys(sids)
                for row in conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchall()
            ]
            return history.summarize(conn, sessions)

    # -- message vectors (hybrid search; see herald.state.search_vectors) -------------

    def pending_vectors(
        self, model: str, limit: int, after_id: int = 0, before_id: int | None = None
    ) -> list[tuple[int, str]]:
        """(id, content) of messages past `after_id` (and below `before_id`) in the
        vector window that `model` has not embedded yet, newest first."""
        with self._readers.connection() as conn:
            return vectors.pending(conn, model, limit, after_id, before_id)

    def message_high_water(self) -> tuple[str, int]:
        """(the first session's id, the newest message id): the first names this file's
        history (session ids carry random digits), so a file replaced at the same path
        is told apart from the one it replaced."""
        with self._readers.connection() as conn:
            first = conn.execute("SELECT id FROM sessions ORDER BY rowid LIMIT 1").fetchone()
            row = conn.execute("SELECT MAX(id) FROM messages").fetchone()
            return (str(first[0]) if first else "", int(row[0] or 0))

    def put_vectors(self, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
        with self._transaction() as conn:
            vectors.put(conn, model, rows)

    def load_vectors_since(
        self, model: str, after_seq: int, file_name: str
    ) -> tuple[list[tuple[int, int, str, str, float, bytes, str]], int, str]:
        """Vectors written after `after_seq` inside the window, the window floor and
        the vectors' file name (see herald.state.search_vectors.load_since)."""
        with self._readers.connection() as conn:
            return vectors.load_since(conn, model, after_seq, file_name)

    def candidate_rows(self, ids: Sequence[int]) -> list[sqlite3.Row]:
        """Rows (id, session_id, role, created_at, active, identity, content) of `ids`."""
        with self._readers.connection() as conn:
            return vectors.candidate_rows(conn, ids)
