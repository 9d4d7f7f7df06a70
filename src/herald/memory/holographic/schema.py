"""The facts.db schema as numbered forward migrations (append only, never edit a
shipped step), applied one transaction per step together with its version row."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass


class FactStoreError(RuntimeError):
    """The fact database cannot be opened or used."""


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "facts, entities, links, category bundles, full-text index",
        (
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            """CREATE TABLE facts (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                content TEXT NOT NULL UNIQUE,
                content_key TEXT NOT NULL UNIQUE,
                category TEXT NOT NULL DEFAULT 'general',
                trust REAL NOT NULL DEFAULT 0.5 CHECK (trust >= 0 AND trust <= 1),
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                last_used_at REAL,
                helpful_count INTEGER NOT NULL DEFAULT 0,
                unhelpful_count INTEGER NOT NULL DEFAULT 0,
                vector BLOB NOT NULL
            )""",
            "CREATE INDEX facts_category ON facts(category, updated_at)",
            "CREATE INDEX facts_updated ON facts(updated_at)",
            """CREATE TABLE entities (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL UNIQUE
            )""",
            """CREATE TABLE fact_entities (
                fact_id INTEGER NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
                entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
                explicit INTEGER NOT NULL DEFAULT 0 CHECK (explicit IN (0, 1)),
                PRIMARY KEY (fact_id, entity_id)
            ) WITHOUT ROWID""",
            "CREATE INDEX fact_entities_entity ON fact_entities(entity_id, fact_id)",
            # vector: the sum of the category's fact phasors (a bundle before
            # normalising, so facts can be subtracted again); associations: the
            # sum of bind(entity atom, fact vector) over each fact's entities.
            """CREATE TABLE category_bundles (
                category TEXT PRIMARY KEY,
                vector BLOB NOT NULL,
                associations BLOB NOT NULL,
                count INTEGER NOT NULL DEFAULT 0
            )""",
            # External content: the text lives in `facts`. Facts are edited and
            # removed (unlike the append-only transcript), so all three triggers.
            """CREATE VIRTUAL TABLE facts_fts USING fts5(
                content,
                category,
                content='facts',
                content_rowid='id',
                tokenize='porter unicode61 remove_diacritics 2'
            )""",
            "INSERT INTO facts_fts(facts_fts, rank) VALUES ('rank', 'bm25(1.0, 0.3)')",
            """CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
                INSERT INTO facts_fts(rowid, content, category)
                VALUES (new.id, new.content, new.category);
            END""",
            """CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
                INSERT INTO facts_fts(facts_fts, rowid, content, category)
                VALUES ('delete', old.id, old.content, old.category);
            END""",
            """CREATE TRIGGER facts_fts_update AFTER UPDATE OF content, category ON facts BEGIN
                INSERT INTO facts_fts(facts_fts, rowid, content, category)
                VALUES ('delete', old.id, old.content, old.category);
                INSERT INTO facts_fts(rowid, content, category)
                VALUES (new.id, new.content, new.category);
            END""",
        ),
    ),
    Migration(
        2,
        "facts' sentence vectors (meanings.py), dropped when a fact's text changes",
        (
            # seq grows with every vector written, so (count, max seq) tells a reader
            # whether its copy in memory is still the file's.
            """CREATE TABLE fact_meanings (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                fact_id INTEGER NOT NULL UNIQUE REFERENCES facts(id) ON DELETE CASCADE,
                model TEXT NOT NULL,
                vector BLOB NOT NULL
            )""",
            """CREATE TRIGGER fact_meanings_stale AFTER UPDATE OF content ON facts BEGIN
                DELETE FROM fact_meanings WHERE fact_id = old.id;
            END""",
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
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchall()
    if not exists:
        return 0
    return int(conn.execute("SELECT MAX(version) FROM schema_version").fetchall()[0][0] or 0)


def migrate(conn: sqlite3.Connection, path: object) -> int:
    """Bring the file up to LATEST_VERSION (conn in autocommit mode)."""
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_CREATE_VERSION_TABLE)
            current = read_version(conn)
            if current > LATEST_VERSION:
                raise FactStoreError(
                    f"{path} has fact-store schema version {current}, newer than this Herald "
                    f"knows ({LATEST_VERSION}); upgrade Herald to open it (the file was not "
                    "modified)"
                )
            if current == LATEST_VERSION:
                conn.execute("COMMIT")
                return current
            step = MIGRATIONS[current]
            for statement in step.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)",
                (step.version, step.description, time.time()),
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
