"""The state.db schema as numbered forward migrations, and the code that applies them.

Each step is applied in its own `BEGIN IMMEDIATE` transaction together with
the `schema_version` row that records it, so a crash mid-migration leaves
the previous version intact and two processes opening an old file at once
upgrade it exactly once. Steps are only ever appended: never edit a step that
has shipped.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from herald.state.errors import StateError


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


# Statements are listed one by one (not run with executescript) because
# executescript commits any open transaction first, which would split a step.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions, messages, system prompts",
        (
            """CREATE TABLE system_prompts (
                hash TEXT PRIMARY KEY,
                text TEXT NOT NULL,
                created_at REAL NOT NULL
            )""",
            """CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                profile TEXT NOT NULL DEFAULT 'default',
                source TEXT NOT NULL DEFAULT 'cli',
                title TEXT,
                model TEXT,
                provider TEXT,
                parent_id TEXT REFERENCES sessions(id),
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                prompt_tokens INTEGER NOT NULL DEFAULT 0,
                completion_tokens INTEGER NOT NULL DEFAULT 0,
                cache_read_tokens INTEGER NOT NULL DEFAULT 0,
                cache_write_tokens INTEGER NOT NULL DEFAULT 0,
                reasoning_tokens INTEGER NOT NULL DEFAULT 0,
                api_calls INTEGER NOT NULL DEFAULT 0,
                estimated_cost_usd REAL NOT NULL DEFAULT 0,
                last_exit_reason TEXT,
                system_prompt_hash TEXT REFERENCES system_prompts(hash)
            )""",
            "CREATE INDEX sessions_updated ON sessions(updated_at)",
            "CREATE INDEX sessions_parent ON sessions(parent_id)",
            """CREATE TABLE messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id),
                seq INTEGER NOT NULL,
                position REAL NOT NULL,
                role TEXT NOT NULL,
                content TEXT,
                tool_calls TEXT,
                tool_call_id TEXT,
                tool_name TEXT,
                reasoning TEXT,
                api_content TEXT,
                active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
                compacted INTEGER NOT NULL DEFAULT 0 CHECK (compacted IN (0, 1)),
                created_at REAL NOT NULL,
                UNIQUE (session_id, seq)
            )""",
            "CREATE INDEX messages_session_position ON messages(session_id, position)",
        ),
    ),
    Migration(
        2,
        "full-text index and append-only guards on messages",
        (
            # External-content FTS: the text lives only in `messages`. Rows are
            # never deleted and content never changes (guards below), so the
            # insert trigger is the only sync path needed.
            """CREATE VIRTUAL TABLE messages_fts USING fts5(
                content,
                content='messages',
                content_rowid='id',
                tokenize='unicode61 remove_diacritics 2'
            )""",
            """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
                INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
            END""",
            # Index whatever a version-1 database already holds.
            "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
            """CREATE TRIGGER messages_no_delete BEFORE DELETE ON messages BEGIN
                SELECT RAISE(ABORT, 'messages are append-only: rows cannot be deleted');
            END""",
            # INSERT OR REPLACE would delete the conflicting row without firing
            # the delete guard (unless recursive_triggers is on), so refuse it here.
            """CREATE TRIGGER messages_no_replace BEFORE INSERT ON messages
            WHEN EXISTS (SELECT 1 FROM messages WHERE id = new.id)
              OR EXISTS (SELECT 1 FROM messages
                         WHERE session_id = new.session_id AND seq = new.seq)
            BEGIN
                SELECT RAISE(ABORT, 'messages are append-only: id or (session_id, seq) taken');
            END""",
            """CREATE TRIGGER messages_immutable_columns
            BEFORE UPDATE OF id, session_id, seq, position, role, content, tool_calls,
                tool_call_id, tool_name, reasoning, api_content, created_at
            ON messages BEGIN
                SELECT RAISE(ABORT,
                    'messages are append-only: only active (1->0) and compacted (0->1) may change');
            END""",
            """CREATE TRIGGER messages_flags_one_way BEFORE UPDATE OF active, compacted
            ON messages
            WHEN NOT ((new.active = old.active OR (old.active = 1 AND new.active = 0))
                  AND (new.compacted = old.compacted
                       OR (old.compacted = 0 AND new.compacted = 1)))
            BEGIN
                SELECT RAISE(ABORT,
                    'messages are append-only: active may only go 1->0 and compacted 0->1');
            END""",
        ),
    ),
    Migration(
        3,
        "usage log and per-session meta",
        (
            "ALTER TABLE sessions ADD COLUMN meta TEXT NOT NULL DEFAULT '{}'",
            """CREATE TABLE usage (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id),
                created_at REAL NOT NULL,
                provider TEXT NOT NULL,
                model TEXT NOT NULL,
                api_mode TEXT NOT NULL DEFAULT '',
                kind TEXT NOT NULL DEFAULT 'main',
                prompt_tokens INTEGER NOT NULL DEFAULT 0,
                completion_tokens INTEGER NOT NULL DEFAULT 0,
                cache_read_tokens INTEGER NOT NULL DEFAULT 0,
                cache_write_tokens INTEGER NOT NULL DEFAULT 0,
                reasoning_tokens INTEGER NOT NULL DEFAULT 0,
                cost_usd REAL NOT NULL DEFAULT 0,
                duration_ms INTEGER NOT NULL DEFAULT 0,
                finish_reason TEXT
            )""",
            "CREATE INDEX usage_session ON usage(session_id, id)",
        ),
    ),
    Migration(
        4,
        "gateway: session map, turns in flight, delivery ledger, dead targets",
        (
            # session_id may live in another profile's state.db (the key names the
            # profile), so it carries no foreign key.
            """CREATE TABLE gateway_sessions (
                session_key TEXT PRIMARY KEY,
                profile TEXT NOT NULL,
                session_id TEXT NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL
            )""",
            """CREATE TABLE gateway_inflight (
                session_key TEXT PRIMARY KEY,
                profile TEXT NOT NULL,
                session_id TEXT NOT NULL,
                platform TEXT NOT NULL,
                chat_id TEXT NOT NULL,
                thread_id TEXT,
                user_id TEXT,
                message_id TEXT,
                text TEXT NOT NULL,
                started_at REAL NOT NULL
            )""",
            """CREATE TABLE gateway_deliveries (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                delivery_key TEXT NOT NULL,
                part_index INTEGER NOT NULL,
                part_count INTEGER NOT NULL,
                platform TEXT NOT NULL,
                chat_id TEXT NOT NULL,
                message_id TEXT,
                status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'dead')),
                attempts INTEGER NOT NULL DEFAULT 0,
                error TEXT,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                UNIQUE (delivery_key, part_index)
            )""",
            """CREATE TABLE gateway_dead_targets (
                platform TEXT NOT NULL,
                chat_id TEXT NOT NULL,
                reason TEXT,
                marked_at REAL NOT NULL,
                PRIMARY KEY (platform, chat_id)
            )""",
        ),
    ),
    Migration(
        5,
        "request split on usage rows; spend-cap warnings given",
        (
            # What each request carried, by part (bytes; tokens estimated at 4 bytes each).
            "ALTER TABLE usage ADD COLUMN request_bytes INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE usage ADD COLUMN system_bytes INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE usage ADD COLUMN tools_bytes INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE usage ADD COLUMN history_bytes INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE usage ADD COLUMN new_bytes INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE usage ADD COLUMN prefix_break TEXT",
            "CREATE INDEX usage_created ON usage(created_at)",
            # One row per warning given: (cap, period, threshold) is claimed once, so two
            # processes spending at once warn once between them.
            """CREATE TABLE spend_warnings (
                cap TEXT NOT NULL,
                period TEXT NOT NULL,
                threshold REAL NOT NULL,
                created_at REAL NOT NULL,
                PRIMARY KEY (cap, period, threshold)
            )""",
        ),
    ),
    Migration(
        6,
        "who each session belongs to",
        (
            # Sessions from before identities existed were all the owner's (one person's
            # agent), so the default keeps an existing home's history with its owner.
            "ALTER TABLE sessions ADD COLUMN identity TEXT NOT NULL DEFAULT 'owner'",
            "CREATE INDEX sessions_identity ON sessions(identity, updated_at)",
            # A message is its session's identity's (set on insert from the session).
            "ALTER TABLE messages ADD COLUMN identity TEXT NOT NULL DEFAULT 'owner'",
        ),
    ),
    Migration(
        8,
        "gateway liveness: inbound events by platform id, replies still owed",
        (
            # Every inbound platform event, recorded before it is acknowledged; a replay
            # of a `started` or `done` event is dropped (herald.state.gateway_liveness).
            """CREATE TABLE gateway_inbound (
                platform TEXT NOT NULL,
                event_id TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('received', 'started', 'done')),
                boot TEXT NOT NULL,
                received_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                PRIMARY KEY (platform, event_id)
            )""",
            "CREATE INDEX gateway_inbound_received ON gateway_inbound(received_at)",
            # The whole text of each reply the gateway owes, so one that failed is
            # retried later (the per-part ledger says which parts already went out).
            """CREATE TABLE gateway_outbox (
                delivery_key TEXT PRIMARY KEY,
                platform TEXT NOT NULL,
                chat_id TEXT NOT NULL,
                thread_id TEXT,
                reply_to TEXT,
                text TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'dead')),
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at REAL NOT NULL DEFAULT 0,
                last_error TEXT,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL
            )""",
            "CREATE INDEX gateway_outbox_due ON gateway_outbox(state, next_attempt_at)",
        ),
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version

_CREATE_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    applied_at REAL NOT NULL
)"""


def read_version(conn: sqlite3.Connection) -> int:
    """The schema version recorded in the file; 0 for a fresh file."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchall()
    if not exists:
        return 0
    rows = conn.execute("SELECT MAX(version) FROM schema_version").fetchall()
    return int(rows[0][0] or 0)


def check_not_newer(version: int, path: Path) -> None:
    if version > LATEST_VERSION:
        raise StateError(
            f"{path} has state schema version {version}, but this Herald only knows "
            f"versions up to {LATEST_VERSION}. It was written by a newer Herald: "
            "upgrade Herald to open it (the file was not modified)."
        )


def migrate(conn: sqlite3.Connection, path: Path) -> int:
    """Bring the file at `conn` up to LATEST_VERSION, one transaction per step.

    `conn` must be in autocommit mode (isolation_level=None). Returns the
    final version. Raises StateError for a file from a newer Herald.
    """
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_CREATE_VERSION_TABLE)
            current = read_version(conn)
            check_not_newer(current, path)
            # Every step not yet recorded, lowest first: a number taken by a branch that
            # merged later than a higher one still runs on files already past it.
            applied = {row[0] for row in conn.execute("SELECT version FROM schema_version")}
            missing = [m for m in MIGRATIONS if m.version not in applied]
            if not missing:
                conn.execute("COMMIT")
                return current
            step = missing[0]
            for statement in step.statements:
                conn.execute(statement)
            problems = conn.execute("PRAGMA foreign_key_check").fetchall()
            if problems:
                raise StateError(
                    f"{path}: migration to version {step.version} found "
                    f"{len(problems)} broken foreign key reference(s); the file was not changed"
                )
            conn.execute(
                "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)",
                (step.version, step.description, time.time()),
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
