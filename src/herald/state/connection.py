"""SQLite connections for the state store: one locked writer, pooled readers.

Durability choice: `synchronous=FULL`. In WAL mode NORMAL already survives a
process kill (a committed transaction is in the WAL via write() before COMMIT
returns), but it can lose the last transactions on power loss or an OS crash.
Herald writes a handful of small transactions per turn, so one fsync per
commit is cheap, and FULL makes "acknowledged" mean "on stable storage".
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from herald.state.errors import StateError

BUSY_TIMEOUT_S = 10.0
MAX_IDLE_READERS = 4


def open_connection(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (we issue BEGIN/COMMIT ourselves)."""
    try:
        conn = sqlite3.connect(
            str(path),
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,  # each connection is used by one thread at a time
        )
    except sqlite3.Error as exc:
        raise StateError(f"cannot open state database {path}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        # With recursive triggers on, the rows an INSERT OR REPLACE would delete
        # go through the no-delete guard instead of silently desyncing the FTS index.
        conn.execute("PRAGMA recursive_triggers = ON")
        conn.execute("PRAGMA synchronous = FULL")
        if read_only:
            conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        conn.close()
        raise StateError(f"{path} is not a usable Herald state database: {exc}") from exc
    return conn


def enable_wal(conn: sqlite3.Connection, path: Path) -> None:
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
    if str(mode).lower() != "wal":
        raise StateError(
            f"{path}: SQLite refused WAL journal mode (got {mode!r}); "
            "put HERALD_HOME on a local filesystem"
        )


def is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class ReaderPool:
    """Read connections handed to one thread at a time. WAL lets them read
    while the writer commits; each statement runs in autocommit, so every
    read sees the latest committed state. Callers must exhaust their cursors
    (fetchall): a half-read SELECT would keep an old snapshot open."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise StateError("the state store is closed")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = open_connection(self._path, read_only=True)
        try:
            yield conn
        finally:
            with self._lock:
                keep = not self._closed and len(self._idle) < MAX_IDLE_READERS
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
