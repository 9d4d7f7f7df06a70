"""Read-modify-write of a file several Herald processes share, without lost updates.

The gateway, cron jobs, board workers, sub-agents and the CLI all edit the same
files in a home (MEMORY.md, USER.md, skills, config.yaml, ...). Every such edit
goes through `update_shared_file(path, transform)`:

1. take an exclusive lock on a dedicated lock file beside the target
   (``.<name>.lock``), which Herald never deletes or replaces, so every writer
   locks the same inode (`fcntl.flock` on POSIX, `msvcrt.locking` elsewhere);
   after locking, check the lock file is still the one at that path (someone
   may have deleted it while we waited), else lock again;
2. read the target and remember its identity: inode, size, mtime_ns and a hash
   of the bytes;
3. run `transform(text)` (None when the file does not exist), which returns the
   new text (None: write nothing) and a result for the caller;
4. write the new text to a temp file in the same directory and fsync it; just
   before the rename, check the target still has the identity read in step 2
   (compare-and-swap). If it changed, another writer got in despite the lock
   (a lock that misbehaves, a writer that ignores it): drop the temp file and go
   back to step 2, so the transform merges with what is on disk now. A
   misbehaving lock costs a retry, never an update;
5. rename over the target and fsync the directory, so the rename is durable.

`transform` may run more than once and must not have side effects that a later
run does not supersede. Readers never lock: the atomic rename means they see
the old file or the new one, never half of either.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

try:
    import fcntl
except ImportError:  # Windows: no flock; msvcrt byte-range locks do the same job there
    fcntl = None  # type: ignore[assignment]
    import msvcrt

log = logging.getLogger(__name__)

R = TypeVar("R")
Transform = Callable[[str | None], tuple[str | None, R]]

DEFAULT_LOCK_TIMEOUT = 10.0
DEFAULT_MODE = 0o600  # new files hold personal notes and settings: owner-only
# Each retry means a writer ignored the lock while we held it; this many in a row
# means something rewrites the file continuously, and waiting longer will not help.
MAX_ATTEMPTS = 50
_POLL_FIRST = 0.001
_POLL_MAX = 0.025


class SharedFileLockTimeout(TimeoutError):
    """Another writer held the file's lock for longer than the timeout."""


class SharedFileConflict(RuntimeError):
    """The file changed under the lock on every attempt; nothing was written."""


@dataclass(frozen=True)
class FileIdentity:
    """What a read saw: equal identities mean the file was not replaced or edited."""

    exists: bool
    device: int = 0
    inode: int = 0
    size: int = 0
    mtime_ns: int = 0
    digest: str = ""  # catches an in-place rewrite within one mtime tick


def lock_path_for(path: Path) -> Path:
    return path.parent / f".{path.name}.lock"


def read_with_identity(path: Path) -> tuple[str | None, FileIdentity]:
    """The file's text (None when missing) and the identity of exactly that text."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
            info = os.fstat(handle.fileno())
    except FileNotFoundError:
        return None, FileIdentity(exists=False)
    identity = FileIdentity(
        exists=True,
        device=info.st_dev,
        inode=info.st_ino,
        size=info.st_size,
        mtime_ns=info.st_mtime_ns,
        digest=hashlib.sha256(data).hexdigest(),
    )
    return data.decode("utf-8"), identity


def read_shared_text(path: Path) -> str | None:
    """The file's text as `update_shared_file` hands it to a transform (None: missing)."""
    return read_with_identity(path)[0]


@contextlib.contextmanager
def shared_file_lock(path: Path, *, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the exclusive lock that guards `path` (its lock file is created beside it).

    Locks are per open file, so two threads of one process exclude each other too.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _acquire(lock_path_for(path), timeout)
    try:
        yield
    finally:
        try:
            _unlock(fd)
        finally:
            os.close(fd)


def update_shared_file(
    path: Path,
    transform: Transform[R],
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    default_mode: int = DEFAULT_MODE,
    lock: bool = True,
    before_replace: Callable[[], None] | None = None,
) -> R:
    """Lock, read, transform, compare-and-swap, atomic replace; returns the transform's
    result. `lock=False` and `before_replace` are seams for tests that force two writers
    to overlap; production callers leave them alone."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    guard = shared_file_lock(path, timeout=timeout) if lock else contextlib.nullcontext()
    with guard:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            text, identity = read_with_identity(path)
            new_text, result = transform(text)
            if new_text is None or new_text == text:
                return result
            if before_replace is not None:
                before_replace()
            if _replace_if_unchanged(path, identity, new_text, default_mode):
                return result
            log.warning(
                "%s changed while its lock was held (attempt %d); merging again", path, attempt
            )
    raise SharedFileConflict(
        f"{path} kept changing under its lock ({MAX_ATTEMPTS} attempts), so nothing was "
        "written; something is rewriting it without taking the lock"
    )


def append_shared_file(
    path: Path,
    text: str,
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    default_mode: int = DEFAULT_MODE,
) -> None:
    """Append `text` to a shared log-like file in one piece and durably.

    An append depends on no read, so there is nothing to compare and swap, and a
    rewrite through a temp file would cost the whole file each time and break
    `tail -f`. Holding the same lock keeps two processes' records from interleaving
    whatever their size (a buffered write may take several syscalls)."""
    path = Path(path)
    data = memoryview(text.encode("utf-8"))
    with shared_file_lock(path, timeout=timeout):
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags, default_mode)
        try:
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: Path, text: str, *, default_mode: int = DEFAULT_MODE) -> None:
    """Replace `path` with `text` whatever it holds now (no lock, no comparison): for
    files one writer owns, such as a backup copy. Shared files use `update_shared_file`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temp(path, text, default_mode)
    _commit(tmp, path)


def _replace_if_unchanged(path: Path, identity: FileIdentity, text: str, default_mode: int) -> bool:
    tmp = _write_temp(path, text, default_mode)
    # The check comes after the slow part (writing and syncing the temp file), so the
    # window between check and rename is as short as it can be.
    if read_with_identity(path)[1] != identity:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    _commit(tmp, path)
    return True


def _write_temp(path: Path, text: str, default_mode: int) -> str:
    try:
        mode = path.stat().st_mode & 0o777  # a replaced file keeps the owner's chosen mode
    except FileNotFoundError:
        mode = default_mode
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _commit(tmp: str, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
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


def _acquire(lock_file: Path, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    delay = _POLL_FIRST
    fd = _open_lock_file(lock_file)
    while True:
        if _try_lock(fd):
            if _still_at(fd, lock_file):
                return fd
            # The lock file was deleted or replaced while we waited: a lock on the old
            # inode excludes nobody who opens the path now. Lock the current one.
            _unlock(fd)
            os.close(fd)
            fd = _open_lock_file(lock_file)
            continue
        if time.monotonic() >= deadline:
            os.close(fd)
            raise SharedFileLockTimeout(
                f"{lock_file.name} stayed locked by another writer for {timeout:g}s"
            )
        # Jitter keeps waiting processes from polling in step.
        time.sleep(min(delay * (0.5 + random.random()), max(deadline - time.monotonic(), 0)))
        delay = min(delay * 2, _POLL_MAX)


def _open_lock_file(lock_file: Path) -> int:
    return os.open(lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)


def _still_at(fd: int, lock_file: Path) -> bool:
    try:
        current = os.stat(lock_file)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino)


def _try_lock(fd: int) -> bool:
    if fcntl is None:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:  # msvcrt reports contention as EACCES or EDEADLOCK
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False  # held through another open file (EWOULDBLOCK; EACCES on some systems)
    return True


def _unlock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    else:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "FileIdentity",
    "SharedFileConflict",
    "SharedFileLockTimeout",
    "append_shared_file",
    "atomic_write",
    "lock_path_for",
    "read_shared_text",
    "read_with_identity",
    "shared_file_lock",
    "update_shared_file",
]
