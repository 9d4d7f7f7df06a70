"""`MemoryFiles`: reads and lost-update-free writes of MEMORY.md / USER.md.

Several Herald processes (a terminal, the gateway, a cron job) and a human in
an editor may touch the same files. Every write goes through
`herald.config.shared_file.update_shared_file`: the lock file next to the
memory file (`.MEMORY.md.lock`), a re-read under the lock, and a
compare-and-swap before the atomic rename, so a write is never based on a stale
read even if the lock misbehaves, and a reader never sees half a file.
Each instance remembers the text it last read or wrote per file; that is what
the clobber guard in `herald.memory.builtin` compares the disk against.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from herald.config.shared_file import (
    DEFAULT_LOCK_TIMEOUT,
    SharedFileLockTimeout,
    atomic_write,
    lock_path_for,
    read_shared_text,
    update_shared_file,
)
from herald.memory.entries import FILE_NAMES

R = TypeVar("R")


class MemoryLockTimeout(RuntimeError):
    """Another writer held the memory file's lock for too long."""


class MemoryFiles:
    def __init__(
        self,
        memories_dir: Path,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        lock: bool = True,
        before_replace: Callable[[], None] | None = None,
        user_dir: Path | None = None,
    ) -> None:
        """`lock=False` and `before_replace` are test seams (see `update_shared_file`)."""
        self.dir = Path(memories_dir)
        # USER.md is one identity's (memories/users/<identity>/); MEMORY.md is shared.
        self.user_dir = Path(user_dir) if user_dir is not None else self.dir
        self.lock_timeout = lock_timeout
        self._lock = lock
        self._before_replace = before_replace
        self._last_seen: dict[str, str] = {}

    def _folder(self, target: str) -> Path:
        return self.user_dir if target == "user" else self.dir

    def path(self, target: str) -> Path:
        return self._folder(target) / FILE_NAMES[target]

    def backup_path(self, target: str) -> Path:
        return self._folder(target) / f"{FILE_NAMES[target]}.bak"

    def lock_path(self, target: str) -> Path:
        return lock_path_for(self.path(target))

    def read_disk(self, target: str) -> str:
        """The file's text now ('' when it does not exist); not remembered."""
        return read_shared_text(self.path(target)) or ""

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

    def update(self, target: str, transform: Callable[[str], tuple[str | None, R]]) -> R:
        """Run `transform` on the file's current text ('' when missing) under the lock and
        write the text it returns (None: nothing); it may run again if the file changed
        before the rename. Raises MemoryLockTimeout, SharedFileConflict or OSError."""
        try:
            return update_shared_file(
                self.path(target),
                lambda text: transform(text or ""),
                timeout=self.lock_timeout,
                lock=self._lock,
                before_replace=self._before_replace,
            )
        except SharedFileLockTimeout as exc:
            raise MemoryLockTimeout(
                f"{FILE_NAMES[target]} stayed locked by another writer for "
                f"{self.lock_timeout:g}s; try again in a moment"
            ) from exc

    def save_backup(self, target: str, text: str) -> Path:
        path = self.backup_path(target)
        atomic_write(path, text)
        return path
