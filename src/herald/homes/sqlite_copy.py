"""What a database copy says about itself (version, counts, integrity).

`online_copy` (herald.state.premigration) uses SQLite's online backup API in one
step: one read transaction, so the copy is the database as of one commit even while
a gateway or a cron tick writes to it. When the source is locked exclusively the
copy waits (the backup API retries) rather than copying half a file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from herald.state import online_copy

# Rows worth counting, by table, under the name a person reads in a manifest.
COUNTED_TABLES = {
    "sessions": "sessions",
    "messages": "messages",
    "cron_jobs": "cron_jobs",
    "board_tasks": "kanban_tasks",
}


def schema_version(conn: sqlite3.Connection) -> int:
    """A database's format version: its `schema_version` table (state.db and the fact
    store) or else `PRAGMA user_version` (cron.db, kanban.db)."""
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchall()
    if has_table:
        return int(conn.execute("SELECT MAX(version) FROM schema_version").fetchall()[0][0] or 0)
    return int(conn.execute("PRAGMA user_version").fetchall()[0][0])


def describe(path: Path) -> tuple[int, dict[str, int], str]:
    """(format version, row counts, integrity verdict) of a database file at rest."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    try:
        verdict = str(conn.execute("PRAGMA integrity_check").fetchall()[0][0])
        version = schema_version(conn)
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        counts = {
            label: int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchall()[0][0])
            for label, table in COUNTED_TABLES.items()
            if table in tables
        }
        return version, counts, verdict
    finally:
        conn.close()


__all__ = ["COUNTED_TABLES", "describe", "online_copy", "schema_version"]
