"""A per-session pids cgroup: the process limit that still holds when Herald runs
as root (the kernel never applies RLIMIT_NPROC to uid 0, even inside a user
namespace), and a way to kill every process a session ever started.

`MemoryCgroup` is the same for memory: the total RAM the whole sandbox may
use (``terminal.sandbox.total_memory_mb``), which per-process rlimits cannot
express.

cgroup v1 (a ``pids`` / ``memory`` hierarchy) and v2 (the controller enabled
in the root's ``cgroup.subtree_control``) are both handled; where neither is
writable `create` returns None and the caller decides what that means.
"""

from __future__ import annotations

import os
import secrets as _random
import signal
import time
from pathlib import Path

_PREFIX = "herald-sbx-"
_ROOT = Path("/sys/fs/cgroup")


def _hierarchy(controller: str) -> tuple[Path, bool] | None:
    """(where to make groups for controller, whether it is cgroup v2), or None."""
    v1 = _ROOT / controller
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1, False
    try:
        enabled = (_ROOT / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return (_ROOT, True) if controller in enabled and os.access(_ROOT, os.W_OK) else None


def _make_group(controller: str, settings: dict[tuple[str, str], str]) -> Path | None:
    """A new group with settings[(v1 file, v2 file)] written, or None."""
    found = _hierarchy(controller)
    if found is None:
        return None
    base, v2 = found
    _remove_empty_leftovers(base)
    path = base / f"{_PREFIX}{os.getpid()}-{_random.token_hex(4)}"
    try:
        path.mkdir()
        for (v1_file, v2_file), value in settings.items():
            (path / (v2_file if v2 else v1_file)).write_text(value)
    except OSError:
        try:
            path.rmdir()
        except OSError:
            pass
        return None
    return path


def memory_cgroup_available() -> bool:
    """Whether a memory cgroup could be made here (for `herald sandbox explain`)."""
    return _hierarchy("memory") is not None


class PidsCgroup:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        value = str(max_pids) if max_pids > 0 else "max"
        path = _make_group("pids", {("pids.max", "pids.max"): value})
        return cls(path) if path is not None else None

    def pids(self) -> list[int]:
        try:
            return [int(line) for line in Path(self.procs_file).read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, timeout: float = 2.0) -> None:
        """SIGKILL everything in the group until it is empty (new forks included)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for _ in range(50):  # the last processes may take a moment to be reaped
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)


class MemoryCgroup(PidsCgroup):
    """A group whose processes together may use at most limit_mb of RAM (the
    kernel's OOM killer picks a process inside when they try for more)."""

    @classmethod
    def create(cls, limit_mb: int) -> MemoryCgroup | None:  # type: ignore[override]
        limit = str(limit_mb * 1024 * 1024)
        settings = {("memory.limit_in_bytes", "memory.max"): limit}
        path = _make_group("memory", settings)
        if path is None:
            return None
        # v2: no swapping around the limit either (v1 needs swap accounting for that).
        swap = path / "memory.swap.max"
        if swap.exists():
            try:
                swap.write_text("0")
            except OSError:
                pass
        return cls(path)


def _remove_empty_leftovers(base: Path) -> None:
    """Groups a crashed Herald left behind (rmdir only succeeds when empty)."""
    try:
        entries = list(base.glob(f"{_PREFIX}*"))
    except OSError:
        return
    for entry in entries:
        try:
            pid = int(entry.name[len(_PREFIX) :].split("-", 1)[0])
        except ValueError:
            continue
        if pid != os.getpid() and not Path(f"/proc/{pid}").exists():
            try:
                entry.rmdir()
            except OSError:
                pass
