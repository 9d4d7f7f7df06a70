"""Reading a hermes-agent home as untrusted input.

Every file is opened through a directory descriptor chain with ``O_NOFOLLOW``, so a
symlink anywhere under the home (to ``/etc``, to the user's ssh keys) is reported,
never read; names are checked before use; sizes are capped before a byte is read.
Databases are copied (SQLite's online backup API, opened read-only) into a private
temporary file and read from the copy; Herald never writes into the hermes home.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAX_TEXT_BYTES = 1 << 20  # config.yaml, SOUL.md, a memory file, one skill file
MAX_DB_BYTES = 2 << 30
MAX_SKILL_FILES = 200


class UnsafeSource(ValueError):
    """A path in the hermes home that is not read (a symlink, too big, not a file)."""


@dataclass(frozen=True)
class HermesHome:
    root: Path

    def _open(self, rel: str) -> int:
        parts = Path(rel).parts
        if not parts or any(p in ("", ".", "..") or "\x00" in p for p in parts):
            raise UnsafeSource(f"{rel}: not a plain relative path")
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = nxt
            return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (40, 20):  # ELOOP, ENOTDIR: a symlink on the way
                raise UnsafeSource(f"{rel}: a symlink (not followed)") from None
            raise
        finally:
            os.close(fd)

    def exists(self, rel: str) -> bool:
        try:
            os.close(self._open(rel))
            return True
        except (OSError, UnsafeSource):
            return False

    def read_bytes(self, rel: str, limit: int = MAX_TEXT_BYTES) -> bytes:
        fd = self._open(rel)
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise UnsafeSource(f"{rel}: not a regular file")
            if info.st_size > limit:
                raise UnsafeSource(f"{rel}: {info.st_size:,} bytes, over the {limit:,} read")
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise UnsafeSource(f"{rel}: over the {limit:,} bytes read")
        return data

    def read_text(self, rel: str, limit: int = MAX_TEXT_BYTES) -> str:
        try:
            return self.read_bytes(rel, limit).decode("utf-8")
        except UnicodeDecodeError:
            raise UnsafeSource(f"{rel}: not UTF-8 text") from None

    def listdir(self, rel: str) -> list[tuple[str, str]]:
        """(name, kind) of the entries of a directory: kind is dir, file, symlink or other."""
        try:
            fd = self._open(rel) if rel else os.open(self.root, os.O_RDONLY)
        except (OSError, UnsafeSource):
            return []
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                return []
            out = []
            for name in sorted(os.listdir(fd)):
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                kind = ("symlink" if stat.S_ISLNK(mode) else "dir" if stat.S_ISDIR(mode)
                        else "file" if stat.S_ISREG(mode) else "other")  # fmt: skip
                out.append((name, kind))
            return out
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def database_copy(self, rel: str):
        """A private copy of the database `rel` (yielded as a Path), removed afterwards."""
        from herald.state import online_copy

        fd = self._open(rel)  # refuses a symlinked path before SQLite sees the name
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_DB_BYTES:
                raise UnsafeSource(f"{rel}: not a regular file of a sane size")
        finally:
            os.close(fd)
        with tempfile.TemporaryDirectory(prefix="herald-import-") as tmp:
            copy = Path(tmp) / "copy.db"
            online_copy(self.root / rel, copy)
            yield copy
