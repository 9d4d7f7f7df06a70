"""Creating, migrating and refusing state.db files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from herald.state import StateError, StateStore
from herald.state.schema import LATEST_VERSION, MIGRATIONS

# A version-1 file as the first Herald release wrote it, typed out by hand so
# the test does not depend on the migration code it is checking.
V1_SQL = """
CREATE TABLE schema_version (
    version INTEGER PRIMARY KEY, description TEXT NOT NULL DEFAULT '', applied_at REAL NOT NULL
);
INSERT INTO schema_version VALUES (1, 'sessions, messages, system prompts', 1700000000.0);
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, text TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, profile TEXT NOT NULL DEFAULT 'default',
    source TEXT NOT NULL DEFAULT 'cli', title TEXT, model TEXT, provider TEXT,
    parent_id TEXT REFERENCES sessions(id), created_at REAL NOT NULL, updated_at REAL NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0, api_calls INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL NOT NULL DEFAULT 0, last_exit_reason TEXT,
    system_prompt_hash TEXT REFERENCES system_prompts(hash)
);
CREATE INDEX sessions_updated ON sessions(updated_at);
CREATE INDEX sessions_parent ON sessions(parent_id);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL, position REAL NOT NULL, role TEXT NOT NULL, content TEXT,
    tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, reasoning TEXT, api_content TEXT,
    active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    compacted INTEGER NOT NULL DEFAULT 0 CHECK (compacted IN (0, 1)),
    created_at REAL NOT NULL, UNIQUE (session_id, seq)
);
CREATE INDEX messages_session_position ON messages(session_id, position);
INSERT INTO sessions (id, title, created_at, updated_at, prompt_tokens)
    VALUES ('20240101-000000-abcdef', 'old chat', 1700000000.0, 1700000000.0, 42);
INSERT INTO messages (session_id, seq, position, role, content, created_at) VALUES
    ('20240101-000000-abcdef', 1, 1.0, 'user', 'where is the lighthouse keeper', 1700000001.0),
    ('20240101-000000-abcdef', 2, 2.0, 'assistant', 'on the northern cliff', 1700000002.0);
"""


def build_v1(path: Path, extra_sql: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(V1_SQL + extra_sql)
    conn.close()


def raw(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    return conn


def test_migrations_are_numbered_in_order() -> None:
    numbers = [m.version for m in MIGRATIONS]
    assert numbers == sorted(set(numbers))  # unique, ascending (gaps allowed, see migrate)
    assert MIGRATIONS[-1].version == LATEST_VERSION


def test_fresh_file_is_created_at_latest_version(db_path: Path) -> None:
    with StateStore(db_path) as store:
        assert store.schema_version == LATEST_VERSION
    conn = raw(db_path)
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert versions == [m.version for m in MIGRATIONS]
    assert {"sessions", "messages", "messages_fts", "system_prompts", "usage"} <= tables


def test_wal_foreign_keys_and_synchronous_are_on(store: StateStore, db_path: Path) -> None:
    conn = raw(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent in the file
    conn.close()
    assert store._writer is not None
    assert store._writer.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store._writer.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store._writer.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    with store._readers.connection() as reader:
        assert reader.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert reader.execute("PRAGMA query_only").fetchone()[0] == 1


def test_reopening_is_idempotent(db_path: Path) -> None:
    with StateStore(db_path) as store:
        sid = store.create_session()
        store.append_message(sid, {"role": "user", "content": "hi"})
    with StateStore(db_path) as store:
        assert store.schema_version == LATEST_VERSION
        assert [m.content for m in store.get_messages(sid)] == ["hi"]


def test_v1_file_is_upgraded_in_place(db_path: Path) -> None:
    build_v1(db_path)
    old = "20240101-000000-abcdef"
    with StateStore(db_path) as store:
        assert store.schema_version == LATEST_VERSION
        session = store.get_session(old)
        assert session is not None
        assert session.title == "old chat"
        assert session.prompt_tokens == 42
        assert session.meta == {}  # column added by migration 3
        # Migration 2 indexed the rows that were already there.
        hits = store.search_messages("lighthouse")
        assert [(h.session_id, h.role) for h in hits] == [(old, "user")]
        # The upgraded file behaves like a new one: appends continue the sequence,
        # the append-only guards are in place, usage can be recorded.
        added = store.append_message(old, {"role": "user", "content": "and the lamp?"})
        assert added.seq == 3
        assert added.position > 2.0
        store.record_usage(old, provider="p", model="m", prompt_tokens=5)
        assert [u.prompt_tokens for u in store.list_usage(old)] == [5]
        store.update_session(old, meta={"anchor": 7})
        assert store.get_session(old).meta == {"anchor": 7}  # type: ignore[union-attr]
    conn = raw(db_path)
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE messages SET content = 'x' WHERE seq = 1")
    conn.close()
    assert versions == [m.version for m in MIGRATIONS]


def test_failed_migration_step_leaves_file_at_old_version(db_path: Path) -> None:
    # A message pointing at a session that does not exist (written with FKs off)
    # makes the foreign-key check at the end of step 2 fail.
    build_v1(
        db_path,
        "INSERT INTO messages (session_id, seq, position, role, content, created_at)"
        " VALUES ('ghost', 1, 1.0, 'user', 'orphan', 1.0);",
    )
    with pytest.raises(StateError, match="foreign key"):
        StateStore(db_path)
    conn = raw(db_path)
    version = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert version == 1
    assert "messages_fts" not in tables  # step 2 rolled back as a whole


def test_newer_file_is_refused_untouched(db_path: Path) -> None:
    build_v1(db_path, f"INSERT INTO schema_version VALUES ({LATEST_VERSION + 5}, 'future', 2.0);")
    before = db_path.read_bytes()
    with pytest.raises(StateError) as excinfo:
        StateStore(db_path)
    message = str(excinfo.value)
    assert f"version {LATEST_VERSION + 5}" in message
    assert "upgrade Herald" in message
    assert db_path.read_bytes() == before
    conn = raw(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not switched to WAL
    conn.close()


def test_file_that_is_not_a_database_is_refused(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StateError, match="not a usable Herald state database"):
        StateStore(db_path)


def test_closed_store_refuses_use(db_path: Path) -> None:
    store = StateStore(db_path)
    sid = store.create_session()
    store.close()
    store.close()  # idempotent
    with pytest.raises(StateError, match="closed"):
        store.append_message(sid, {"role": "user", "content": "late"})
    with pytest.raises(StateError, match="closed"):
        store.get_messages(sid)
