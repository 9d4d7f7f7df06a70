"""`MemoryFiles`: locked, atomic reads and writes of MEMORY.md / USER.md.

Several Herald processes (a terminal, the gateway, a cron job) and a human in
an editor may touch the same files. Writers take a lock file next to the
memory file (`.MEMORY.md.lock`), re-read the file under the lock and replace
it atomically (temp file, fsync, rename), so a reader never sees half a file.
Each instance remembers the text it last read or wrote per file; that is what
the clobber guard in `herald.memory.builtin` compares the disk against.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from herald.memory.entries import FILE_NAMES

DEFAULT_LOCK_TIMEOUT = 10.0


class MemoryLockTimeout(RuntimeError):
    """Another writer held the memory file's lock for too long."""


class MemoryFiles:
    def __init__(
        self,
        memories_dir: Path,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        user_dir: Path | None = None,
    ) -> None:
        self.dir = Path(memories_dir)
        # USER.md is one identity's (memories/users/<identity>/); MEMORY.md is shared.
        self.user_dir = Path(user_dir) if user_dir is not None else self.dir
        self.lock_timeout = lock_timeout
        self._last_seen: dict[str, str] = {}

    def _folder(self, target: str) -> Path:
        return self.user_dir if target == "user" else self.dir

    def path(self, target: str) -> Path:
        return self._folder(target) / FILE_NAMES[target]

    def backup_path(self, target: str) -> Path:
        return self._folder(target) / f"{FILE_NAMES[target]}.bak"

    def lock_path(self, target: str) -> Path:
        return self._folder(target) / f".{FILE_NAMES[target]}.lock"

    def read_disk(self, target: str) -> str:
        """The file's text now ('' when it does not exist); not remembered."""
        try:
            return self.path(target).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def read(self, target: str) -> str:
        """The file's text, remembered as what this instance last saw."""
        text = self.read_disk(target)
        self._last_seen[target] = text
        return text

    def last_seen(self, target: str) -> str | None:
        """The text this instance last read or wrote (None: never looked)."""
        return self._last_seen.get(target)

    def mark_seen(self, target: str, text: str) -> None:
        self._last_seen[target] = text

    @contextlib.contextmanager
    def locked(self, target: str) -> Iterator[None]:
        self._folder(target).mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.lock_path(target)), timeout=self.lock_timeout)
        try:
            lock.acquire()
        except Timeout as exc:
            raise MemoryLockTimeout(
                f"{FILE_NAMES[target]} stayed locked by another writer for "
                f"{self.lock_timeout:g}s; try again in a moment"
            ) from exc
        try:
            yield
        finally:
            lock.release()

    def write(self, target: str, text: str) -> None:
        """Replace the file atomically (call inside `locked`)."""
        atomic_write(self.path(target), text)
        self._last_seen[target] = text

    def save_backup(self, target: str, text: str) -> Path:
        path = self.backup_path(target)
        atomic_write(path, text)
        return path


def atomic_write(path: Path, text: str) -> None:
    """Write `text` to a temp file beside `path`, fsync it and rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600  # memory holds personal notes: owner-only by default
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is; not every OS allows this.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
