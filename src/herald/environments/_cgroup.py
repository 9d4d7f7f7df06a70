"""A per-session pids cgroup: the process limit that still holds when Herald runs
as root (the kernel never applies RLIMIT_NPROC to uid 0, even inside a user
namespace), and a way to kill every process a session ever started.

cgroup v1 (a ``pids`` hierarchy) and v2 (``pids`` enabled in the root's
``cgroup.subtree_control``) are both handled; where neither is writable
`PidsCgroup.create` returns None and the caller decides what that means.
"""

from __future__ import annotations

import os
import secrets as _random
import signal
import time
from pathlib import Path

_PREFIX = "herald-sbx-"
_V1 = Path("/sys/fs/cgroup/pids")
_V2 = Path("/sys/fs/cgroup")


def _pids_hierarchy() -> Path | None:
    if (_V1 / "cgroup.procs").exists() and os.access(_V1, os.W_OK):
        return _V1
    try:
        enabled = (_V2 / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return _V2 if "pids" in enabled and os.access(_V2, os.W_OK) else None


class PidsCgroup:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        base = _pids_hierarchy()
        if base is None:
            return None
        _remove_empty_leftovers(base)
        path = base / f"{_PREFIX}{os.getpid()}-{_random.token_hex(4)}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(max_pids) if max_pids > 0 else "max")
        except OSError:
            try:
                path.rmdir()
            except OSError:
                pass
            return None
        return cls(path)

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
