"""The SQLite board: one file in the home, for every worker on this machine.

WAL mode so readers never wait for the writer; every write is a short
``BEGIN IMMEDIATE`` transaction, which takes the database's write lock up front:
two processes claiming at once are serialized and the second sees the first's claim.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from herald.kanban.model import KanbanError
from herald.kanban.sql_board import SqlBoard
from herald.kanban.sql_schema import Query, Row, schema_sql

BUSY_TIMEOUT_MS = 30_000
# kanban.db's format, kept in PRAGMA user_version; an older Herald refuses a higher one.
FORMAT_VERSION = 1


class SqliteBoard(SqlBoard):
    backend = "sqlite"

    def __init__(
        self, path: Path, *, max_attempts: int = 3, clock: Callable[[], float] = time.time
    ):
        super().__init__(max_attempts=max_attempts, clock=clock)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise KanbanError(f"cannot open the board {self.path}: {exc}") from exc
        self._conn = conn
        self._lock = threading.Lock()
        with self.transaction(write=True) as q:
            found = int(q("PRAGMA user_version", ())[0][0])
            if found > FORMAT_VERSION:
                raise KanbanError(
                    f"{self.path} has board format {found}, but this Herald knows formats up "
                    f"to {FORMAT_VERSION}: it was written by a newer Herald; upgrade Herald to "
                    "use it (the file was not modified)"
                )
            for statement in schema_sql("INTEGER PRIMARY KEY AUTOINCREMENT", "REAL"):
                q(statement, ())
            q(f"PRAGMA user_version = {FORMAT_VERSION}", ())

    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[Query]:
        def q(sql: str, params: Sequence[Any]) -> list[Row]:
            return conn.execute(sql, tuple(params)).fetchall()

        conn = self._conn
        with self._lock:
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.OperationalError as exc:  # locked past the busy timeout
                raise KanbanError(f"the board {self.path} is busy: {exc}") from exc
            try:
                yield q
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):  # disk full, I/O error, locked
                    raise KanbanError(f"the board {self.path} failed: {exc}") from exc
                raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()
