"""What of a home a backup takes, and the path rules every copy in or out obeys.

A home is walked without following symlinks: a link (to a file or a directory) is
reported as skipped, never copied through, so a backup cannot pull in files from
outside the home and a restore never writes through one. SQLite files are copied
with the online backup API (consistent while a gateway writes to them); their
``-wal``/``-shm``/``-journal`` companions are never copied (the copy already holds
every committed transaction).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SQLITE_MAGIC = b"SQLite format 3\x00"
SECRET_FILES = frozenset({".env"})
# Regenerable or transient parts of a home, at any level (profiles are homes too):
# logs, caches, earlier backups, the gateway's run files, and the checkpoints' shadow
# repositories (undo data for workdirs, which can be far larger than the home).
SKIPPED_DIRS = frozenset({"logs", "cache", "backups", "gateway", "checkpoints"})
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")
STAGING_PREFIX = ".herald-"  # names of half-written copies (a killed create/restore)


class UnsafePathError(ValueError):
    """A relative path that would leave the directory it is meant for."""


@dataclass(frozen=True)
class HomeEntry:
    rel: str  # POSIX path relative to the home
    kind: str  # "file" | "sqlite"
    size: int


@dataclass(frozen=True)
class Skipped:
    rel: str
    reason: str


def safe_relative(rel: str) -> PurePosixPath:
    """`rel` as a relative path that stays inside its root, or UnsafePathError."""
    if not rel or "\x00" in rel or "\\" in rel:
        raise UnsafePathError(f"unusable path {rel!r} in the backup")
    path = PurePosixPath(rel)
    if path.is_absolute() or any(part in ("", ".", "..") for part in path.parts):
        raise UnsafePathError(f"path {rel!r} in the backup leaves the home; refusing it")
    return path


def is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def walk_home(root: Path, *, include_secrets: bool) -> tuple[list[HomeEntry], list[Skipped]]:
    """Every file a backup of `root` takes, and what it leaves out and why."""
    entries: list[HomeEntry] = []
    skipped: list[Skipped] = []

    def visit(directory: Path, rel_dir: PurePosixPath) -> None:
        try:
            children = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(str(rel_dir) or ".", f"unreadable: {exc.strerror}"))
            return
        for child in children:
            rel = rel_dir / child.name
            info = child.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                skipped.append(Skipped(str(rel), "a symlink (never followed)"))
            elif stat.S_ISDIR(info.st_mode):
                if child.name in SKIPPED_DIRS or child.name.startswith(STAGING_PREFIX):
                    continue
                visit(Path(child.path), rel)
            elif not stat.S_ISREG(info.st_mode):
                skipped.append(Skipped(str(rel), "not a regular file"))
            elif child.name.endswith(SQLITE_COMPANIONS) or child.name.startswith(STAGING_PREFIX):
                continue
            elif child.name in SECRET_FILES and not include_secrets:
                skipped.append(Skipped(str(rel), "secrets (use --include-secrets)"))
            else:
                kind = "sqlite" if is_sqlite(Path(child.path)) else "file"
                entries.append(HomeEntry(str(rel), kind, info.st_size))

    visit(root, PurePosixPath(""))
    return entries, skipped


def open_inside(root: Path, rel: str, flags: int, mode: int = 0o600) -> int:
    """Open `root/rel` creating missing parent directories, refusing any symlink on
    the way (so a link planted in the home cannot redirect a write outside it)."""
    parts = safe_relative(rel).parts
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                os.mkdir(part, 0o700, dir_fd=dir_fd)
            except FileExistsError:
                pass
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = nxt
        return os.open(parts[-1], flags | os.O_NOFOLLOW, mode, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def no_symlink_between(root: Path, rel: str) -> bool:
    """True when no component of `root/rel` below `root` is a symlink."""
    current = root
    for part in safe_relative(rel).parts:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return False
        except FileNotFoundError:
            return True
    return True
