"""`CronStore`: jobs, run history, run locks, incidents, the outbox and scheduler
heartbeats in ``<home>/cron/cron.db``.

The file is SQLite in WAL mode with ``synchronous=FULL``; every write is one short
``BEGIN IMMEDIATE`` transaction, so several processes (a gateway, a daemon, ticks
from system cron) can share it. The run history is append-only (triggers refuse
UPDATE and DELETE) and holds at most one record per scheduled occurrence of a job
(a UNIQUE key), which is what makes "exactly one record per occurrence" a property
of the database rather than of careful code.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from herald.cron.records import (
    Incident,
    Job,
    NewRun,
    OutboxItem,
    RunKind,
    RunLock,
    RunRecord,
    RunStatus,
    SchedulerBeat,
    new_holder,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cron_jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    schedule TEXT NOT NULL,          -- normalized (one-shots as an ISO instant)
    schedule_text TEXT NOT NULL,     -- as the user wrote it
    tz TEXT NOT NULL,
    prompt TEXT NOT NULL,
    skills TEXT NOT NULL DEFAULT '[]',
    allow TEXT NOT NULL DEFAULT '[]', -- command patterns this job may run unattended
    script TEXT,
    deliver TEXT NOT NULL,
    toolset TEXT,
    model TEXT,
    catch_up TEXT NOT NULL,
    max_turns INTEGER,
    budget_tokens INTEGER,
    jitter_seconds INTEGER NOT NULL DEFAULT 0,
    enabled INTEGER NOT NULL DEFAULT 1,
    next_run REAL,                   -- the first occurrence without a record; NULL = none left
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cron_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL,
    job_name TEXT NOT NULL,
    kind TEXT NOT NULL,              -- scheduled | manual
    scheduled_for REAL NOT NULL,
    status TEXT NOT NULL,            -- ok | failed | blocked | skipped | missed
    reason TEXT,
    error TEXT,
    late INTEGER NOT NULL DEFAULT 0,
    started_at REAL,
    finished_at REAL NOT NULL,
    session_id TEXT,
    output TEXT,
    tokens INTEGER NOT NULL DEFAULT 0,
    recorded_by TEXT NOT NULL,
    UNIQUE (job_id, kind, scheduled_for)
);
CREATE TRIGGER IF NOT EXISTS cron_runs_append_only_update BEFORE UPDATE ON cron_runs
BEGIN SELECT RAISE(ABORT, 'the cron run history is append-only'); END;
CREATE TRIGGER IF NOT EXISTS cron_runs_append_only_delete BEFORE DELETE ON cron_runs
BEGIN SELECT RAISE(ABORT, 'the cron run history is append-only'); END;
CREATE TABLE IF NOT EXISTS cron_locks (
    job_id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    scheduled_for REAL NOT NULL,
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    taken_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cron_incidents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL,
    job_name TEXT NOT NULL,
    opened_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    closed_at REAL,
    failures INTEGER NOT NULL,
    last_error TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cron_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_name TEXT NOT NULL,
    run_id INTEGER,
    target TEXT NOT NULL,
    what TEXT NOT NULL,              -- result | blocked | failing | recovered
    text TEXT NOT NULL,
    status TEXT NOT NULL,            -- queued | delivered | dead
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cron_schedulers (
    holder TEXT PRIMARY KEY,
    kind TEXT NOT NULL,              -- gateway | daemon
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at REAL NOT NULL,
    beat_at REAL NOT NULL,
    interval REAL NOT NULL
);
"""

# Who made the job, kept apart from the schema above so that older databases get the
# columns on open: 'cli' (the owner), 'tool' (the model) or 'unknown' (a row from before
# this record, treated like the model's); and for the model's jobs the chat they came
# from (platform:chat[:thread]). herald.cron.confine decides where such a job may deliver.
_JOB_PROVENANCE = (
    ("created_by", "TEXT NOT NULL DEFAULT 'unknown'"),
    ("origin", "TEXT"),
)

_JOB_FIELDS = (
    "schedule", "schedule_text", "tz", "prompt", "skills", "allow", "script", "deliver", "toolset",
    "model", "catch_up", "max_turns", "budget_tokens", "jitter_seconds", "enabled", "next_run",
    "created_by", "origin",
)  # fmt: skip


# cron.db's format, kept in PRAGMA user_version. Raise it with a change an older Herald
# would misread; an older Herald then refuses the file instead of corrupting it.
FORMAT_VERSION = 1


class CronStoreError(RuntimeError):
    """The cron database cannot be used (the message says why and what to do)."""


def _check_format(conn: sqlite3.Connection, path: Path) -> None:
    found = int(conn.execute("PRAGMA user_version").fetchall()[0][0])
    if found > FORMAT_VERSION:
        raise CronStoreError(
            f"{path} has cron format {found}, but this Herald knows formats up to "
            f"{FORMAT_VERSION}: it was written by a newer Herald; upgrade Herald to use it "
            "(the file was not modified)"
        )


class CronStore:
    """The cron tables of one home. Safe to share between threads."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            with _immediate(conn):
                _check_format(conn, self.path)
                _run_script(conn, _SCHEMA)
                _add_columns(conn, "cron_jobs", _JOB_PROVENANCE)
                conn.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
        except (OSError, sqlite3.Error) as exc:
            raise CronStoreError(
                f"cannot open the cron database {self.path}: {exc}; check that the Herald "
                "home is writable and on a local filesystem"
            ) from exc
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.RLock()

    @classmethod
    def for_home(cls, home: Any) -> CronStore:
        return cls(Path(home.cron_dir) / "cron.db")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> CronStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                raise CronStoreError("the cron store is closed")
            with _immediate(self._conn):
                yield self._conn

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            if self._conn is None:
                raise CronStoreError("the cron store is closed")
            return self._conn.execute(sql, params).fetchall()

    # ---- jobs -----------------------------------------------------------------------------

    def add_job(self, job: Job) -> Job:
        now = time.time()
        values = {f: _to_db(f, getattr(job, f)) for f in _JOB_FIELDS}
        with self.transaction() as conn:
            if conn.execute("SELECT 1 FROM cron_jobs WHERE name = ?", (job.name,)).fetchall():
                raise ValueError(
                    f"a job named {job.name!r} already exists: pick another name, or change "
                    f"it with `herald cron edit {job.name}`"
                )
            cursor = conn.execute(
                f"INSERT INTO cron_jobs (name, {', '.join(values)}, created_at, updated_at)"
                f" VALUES (?, {', '.join('?' for _ in values)}, ?, ?)",
                (job.name, *values.values(), now, now),
            )
            job_id = int(cursor.lastrowid or 0)
        found = self.job_by_id(job_id)
        assert found is not None
        return found

    def update_job(self, job_id: int, **fields: Any) -> Job:
        unknown = set(fields) - set(_JOB_FIELDS)
        if unknown:
            raise ValueError(f"cannot change job field(s) {sorted(unknown)}")
        values = {f: _to_db(f, v) for f, v in fields.items()}
        with self.transaction() as conn:
            conn.execute(
                f"UPDATE cron_jobs SET {', '.join(f'{f} = ?' for f in values)}, updated_at = ?"
                " WHERE id = ?",
                (*values.values(), time.time(), job_id),
            )
        found = self.job_by_id(job_id)
        if found is None:
            raise ValueError(f"job {job_id} no longer exists")
        return found

    def remove_job(self, job_id: int) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM cron_jobs WHERE id = ?", (job_id,))
            conn.execute("DELETE FROM cron_locks WHERE job_id = ?", (job_id,))

    def job(self, name: str) -> Job | None:
        rows = self._read("SELECT * FROM cron_jobs WHERE name = ?", (name,))
        return _job(rows[0]) if rows else None

    def job_by_id(self, job_id: int) -> Job | None:
        rows = self._read("SELECT * FROM cron_jobs WHERE id = ?", (job_id,))
        return _job(rows[0]) if rows else None

    def jobs(self) -> list[Job]:
        return [_job(r) for r in self._read("SELECT * FROM cron_jobs ORDER BY name")]

    # ---- runs -----------------------------------------------------------------------------

    def record_run(
        self,
        job: Job,
        kind: RunKind,
        scheduled_for: float,
        run: NewRun,
        *,
        recorded_by: str,
        next_run: float | None,
        advance: bool = True,
        release_holder: str | None = None,
    ) -> RunRecord | None:
        """Append the one record of this occurrence, release its lock (when held by
        `release_holder`) and, in the same transaction and only after the record,
        move `next_run` past it. None when the occurrence already had a record."""
        with self.transaction() as conn:
            try:
                cursor = conn.execute(
                    "INSERT INTO cron_runs (job_id, job_name, kind, scheduled_for, status, reason,"
                    " error, late, started_at, finished_at, session_id, output, tokens,"
                    " recorded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        job.id, job.name, kind, scheduled_for, run.status, run.reason,
                        run.error, int(run.late), run.started_at, time.time(), run.session_id,
                        run.output, run.tokens, recorded_by,
                    ),
                )  # fmt: skip
                run_id: int | None = int(cursor.lastrowid or 0)
            except sqlite3.IntegrityError:
                run_id = None
            if release_holder is not None:
                conn.execute(
                    "DELETE FROM cron_locks WHERE job_id = ? AND holder = ?",
                    (job.id, release_holder),
                )
            if advance and kind == "scheduled":
                conn.execute(
                    "UPDATE cron_jobs SET next_run = ?, updated_at = ? WHERE id = ?"
                    " AND next_run IS NOT NULL AND next_run <= ?",
                    (next_run, time.time(), job.id, scheduled_for),
                )
        if run_id is None:
            return None
        rows = self._read("SELECT * FROM cron_runs WHERE id = ?", (run_id,))
        return _run(rows[0])

    def has_run(self, job_id: int, kind: str, scheduled_for: float) -> bool:
        rows = self._read(
            "SELECT 1 FROM cron_runs WHERE job_id = ? AND kind = ? AND scheduled_for = ?",
            (job_id, kind, scheduled_for),
        )
        return bool(rows)

    def runs(self, job_name: str | None = None, *, limit: int = 50) -> list[RunRecord]:
        """The newest `limit` records (of one job, or all), oldest first."""
        if job_name is None:
            rows = self._read("SELECT * FROM cron_runs ORDER BY id DESC LIMIT ?", (limit,))
        else:
            rows = self._read(
                "SELECT * FROM cron_runs WHERE job_name = ? ORDER BY id DESC LIMIT ?",
                (job_name, limit),
            )
        return [_run(r) for r in reversed(rows)]

    def tokens_since(self, job_id: int, since: float) -> int:
        rows = self._read(
            "SELECT COALESCE(SUM(tokens), 0) AS n FROM cron_runs WHERE job_id = ?"
            " AND finished_at >= ?",
            (job_id, since),
        )
        return int(rows[0]["n"])

    # ---- locks ----------------------------------------------------------------------------

    def lock_of(self, job_id: int) -> RunLock | None:
        rows = self._read("SELECT * FROM cron_locks WHERE job_id = ?", (job_id,))
        return RunLock(**dict(rows[0])) if rows else None

    def take_lock(
        self, job: Job, kind: RunKind, scheduled_for: float, *, holder: str, ttl: float
    ) -> bool:
        """Take the job's run lock for this occurrence; False if someone holds it or the
        occurrence already has its record."""
        now = time.time()
        with self.transaction() as conn:
            if conn.execute("SELECT 1 FROM cron_locks WHERE job_id = ?", (job.id,)).fetchall():
                return False
            if conn.execute(
                "SELECT 1 FROM cron_runs WHERE job_id = ? AND kind = ? AND scheduled_for = ?",
                (job.id, kind, scheduled_for),
            ).fetchall():
                return False
            conn.execute(
                "INSERT INTO cron_locks (job_id, kind, scheduled_for, holder, pid, host,"
                " taken_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (job.id, kind, scheduled_for, holder, os.getpid(), socket.gethostname(), now,
                 now + ttl),
            )  # fmt: skip
        return True

    def refresh_lock(self, job_id: int, holder: str, ttl: float) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE cron_locks SET expires_at = ? WHERE job_id = ? AND holder = ?",
                (time.time() + ttl, job_id, holder),
            )

    def drop_lock(self, job_id: int, holder: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM cron_locks WHERE job_id = ? AND holder = ?", (job_id, holder))

    # ---- incidents ------------------------------------------------------------------------

    def open_incident(self, job_id: int) -> Incident | None:
        rows = self._read(
            "SELECT * FROM cron_incidents WHERE job_id = ? AND closed_at IS NULL"
            " ORDER BY id DESC LIMIT 1",
            (job_id,),
        )
        return Incident(**dict(rows[0])) if rows else None

    def start_incident(self, job: Job, failures: int, error: str) -> None:
        now = time.time()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO cron_incidents (job_id, job_name, opened_at, updated_at, failures,"
                " last_error) VALUES (?, ?, ?, ?, ?, ?)",
                (job.id, job.name, now, now, failures, error),
            )

    def update_incident(self, incident_id: int, failures: int, error: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE cron_incidents SET failures = ?, last_error = ?, updated_at = ?"
                " WHERE id = ?",
                (failures, error, time.time(), incident_id),
            )

    def close_incident(self, incident_id: int) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE cron_incidents SET closed_at = ?, updated_at = ? WHERE id = ?",
                (time.time(), time.time(), incident_id),
            )

    def incidents(self, job_name: str) -> list[Incident]:
        rows = self._read(
            "SELECT * FROM cron_incidents WHERE job_name = ? ORDER BY id", (job_name,)
        )
        return [Incident(**dict(r)) for r in rows]

    # ---- outbox ---------------------------------------------------------------------------

    def queue(
        self, job_name: str, run_id: int | None, target: str, what: str, text: str,
        *, status: str = "queued", error: str | None = None,
    ) -> OutboxItem:  # fmt: skip
        now = time.time()
        with self.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO cron_outbox (job_name, run_id, target, what, text, status, attempts,"
                " error, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (job_name, run_id, target, what, text, status, 0 if status == "queued" else 1,
                 error, now, now),
            )  # fmt: skip
            item_id = int(cursor.lastrowid or 0)
        return self.outbox_item(item_id)

    def outbox_item(self, item_id: int) -> OutboxItem:
        rows = self._read("SELECT * FROM cron_outbox WHERE id = ?", (item_id,))
        return _outbox(rows[0])

    def outbox(self, *, status: str | None = None, job_name: str | None = None) -> list[OutboxItem]:
        sql, params = "SELECT * FROM cron_outbox WHERE 1 = 1", []
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        if job_name is not None:
            sql += " AND job_name = ?"
            params.append(job_name)
        return [_outbox(r) for r in self._read(sql + " ORDER BY id", tuple(params))]

    def mark_outbox(self, item_id: int, status: str, error: str | None = None) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE cron_outbox SET status = ?, error = ?, attempts = attempts + 1,"
                " updated_at = ? WHERE id = ?",
                (status, error, time.time(), item_id),
            )

    # ---- scheduler heartbeats -------------------------------------------------------------

    def beat(self, holder: str, kind: str, interval: float, started_at: float) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO cron_schedulers (holder, kind, pid, host, started_at, beat_at,"
                " interval) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(holder) DO UPDATE SET"
                " beat_at = excluded.beat_at, interval = excluded.interval",
                (holder, kind, os.getpid(), socket.gethostname(), started_at, time.time(),
                 interval),
            )  # fmt: skip

    def end_beat(self, holder: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM cron_schedulers WHERE holder = ?", (holder,))

    def schedulers(self) -> list[SchedulerBeat]:
        """Schedulers whose heartbeat is fresh (and whose process exists, on this host)."""
        now = time.time()
        beats = [SchedulerBeat(**dict(r)) for r in self._read("SELECT * FROM cron_schedulers")]
        return [b for b in beats if b.is_alive(now)]


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """executescript would COMMIT our transaction; run the statements one by one."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""


def _add_columns(
    conn: sqlite3.Connection, table: str, columns: tuple[tuple[str, str], ...]
) -> None:
    have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    for name, decl in columns:
        if name not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")


def _to_db(name: str, value: Any) -> Any:
    if name in ("skills", "allow"):
        return json.dumps(list(value or ()))
    if name == "enabled":
        return int(bool(value))
    return value


def _job(row: sqlite3.Row) -> Job:
    data = dict(row)
    data["skills"] = tuple(json.loads(data["skills"] or "[]"))
    data["allow"] = tuple(json.loads(data["allow"] or "[]"))
    data["enabled"] = bool(data["enabled"])
    return Job(**data)


def _run(row: sqlite3.Row) -> RunRecord:
    data = dict(row)
    data["late"] = bool(data["late"])
    return RunRecord(**data)


def _outbox(row: sqlite3.Row) -> OutboxItem:
    data = dict(row)
    data.pop("updated_at", None)
    return OutboxItem(**data)


__all__ = [
    "CronStore",
    "CronStoreError",
    "Incident",
    "Job",
    "NewRun",
    "OutboxItem",
    "RunKind",
    "RunLock",
    "RunRecord",
    "RunStatus",
    "SchedulerBeat",
    "new_holder",
]
