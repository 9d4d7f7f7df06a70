"""The copy of a database taken before a migration changes it, and putting it back.

Before state.db is migrated, a consistent copy (SQLite's online backup API) goes to
``<home>/backups/pre-<herald version>-<time>/``: written under a staging name and
renamed when complete, so a process killed while copying leaves no half copy that
looks whole, and the database itself is untouched until the copy exists. The
migration runs in one transaction (herald.state.schema.migrate), so a failure or a
kill rolls back to the old version; the copy is for a migration that committed and
turned out wrong, and for a file that no longer reads after a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
from pathlib import Path

import herald.state.schema as schema
from herald import __version__
from herald.state.errors import StateError
from herald.state.schema import MigrationFailed, migrate, read_version

STAGING_PREFIX = ".herald-partial-"
WAL_COMPANIONS = ("-wal", "-shm", "-journal")


def online_copy(source: Path, dest: Path) -> None:
    """Copy the database at `source` into the new self-contained file `dest` (no WAL),
    as of one commit even while another process writes to it."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, isolation_level=None)
    try:
        src.execute("PRAGMA busy_timeout = 30000")
        dst = sqlite3.connect(str(dest), isolation_level=None)
        try:
            src.backup(dst, pages=-1, sleep=0.05)
            dst.execute("PRAGMA journal_mode = DELETE")  # the copy inherits the WAL flag
        finally:
            dst.close()
    finally:
        src.close()


def pre_migration_dir(db_path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return db_path.parent / "backups" / f"pre-{__version__}-{stamp}"


def copy_before_migration(db_path: Path, from_version: int, to_version: int) -> Path:
    """Copy `db_path` aside before it is migrated; returns the copy's path."""
    final = pre_migration_dir(db_path)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = final.parent / f"{STAGING_PREFIX}{final.name}-{os.getpid()}"
    staging.mkdir()
    try:
        online_copy(db_path, staging / db_path.name)
        (staging / "MIGRATION.txt").write_text(
            f"{db_path.name} as it was before Herald {__version__} migrated it from schema "
            f"version {from_version} to {to_version}.\nTo go back: stop Herald, copy this file "
            f"over {db_path} and delete {db_path.name}-wal and {db_path.name}-shm beside it.\n",
            encoding="utf-8",
        )
        if final.exists():  # two migrations in the same second: the database's own name
            for child in staging.iterdir():
                target = final / child.name
                if not target.exists():
                    os.rename(child, target)
            shutil.rmtree(staging, ignore_errors=True)
        else:
            os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final / db_path.name


def put_back(copy: Path, db_path: Path) -> None:
    """Replace `db_path` with the pre-migration `copy` (no other connection may be open)."""
    staged = db_path.with_name(f".{db_path.name}.restore-{os.getpid()}")
    shutil.copyfile(copy, staged)
    for suffix in WAL_COMPANIONS:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(str(db_path) + suffix)
    os.replace(staged, db_path)


def migrate_keeping_a_copy(conn: sqlite3.Connection, path: Path) -> int:
    """`migrate`, after copying the file aside when it holds an older version. A failed
    migration rolls back; should the file then not read as it did, the copy goes back."""
    found = read_version(conn)
    latest = schema.LATEST_VERSION  # read at call time: tests append steps
    copy = copy_before_migration(path, found, latest) if 0 < found < latest else None
    try:
        return migrate(conn, path)
    except MigrationFailed as exc:
        how = "rolled back: it is as it was"
        conn.close()  # no connection may hold the file while it is checked or put back
        if copy is not None and not _reads_as(path, exc.from_version):
            put_back(copy, path)
            how = "restored from the copy taken before the migration"
        where = f"; a copy from before is at {copy}" if copy is not None else ""
        raise StateError(
            f"{exc}. The file was {how} (schema version {exc.from_version}){where}. Keep "
            "using the Herald version you had, and report this with the message above."
        ) from exc


def _reads_as(path: Path, version: int) -> bool:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        try:
            ok = conn.execute("PRAGMA quick_check").fetchall()[0][0] == "ok"
            return ok and read_version(conn) == version
        finally:
            conn.close()
    except sqlite3.Error:
        return False
