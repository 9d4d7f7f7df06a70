"""No Chromium outlives the Herald that started it.

Each browser session gets a fresh profile directory under
``<home>/cache/browser/`` (never the user's own profile) and a pidfile next to
it naming the Herald process that owns it (pid and start time, so a reused pid
is not mistaken for the owner). Chromium normally exits with Playwright's
driver when Herald dies, even on kill -9; `reap_orphans` is the backstop for a
browser that did not (wedged, stopped, or its driver killed with it): every
process whose command line names the profile of a pidfile whose owner is gone
is killed, and the profile and pidfile are removed. It runs before each new
browser session starts (and can run from anywhere else that starts up).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

PIDFILE_SUFFIX = ".owner.json"


@dataclass(frozen=True)
class Profile:
    directory: Path
    pidfile: Path

    def release(self) -> None:
        """Our own session ended normally: forget it."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self.pidfile.unlink(missing_ok=True)


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (field 22 of /proc/PID/stat), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def new_profile(root: Path) -> Profile:
    """A fresh profile directory owned by this process, with its pidfile written first."""
    root.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(6)
    directory = root / f"profile-{token}"
    pidfile = root / f"profile-{token}{PIDFILE_SUFFIX}"
    owner = {"pid": os.getpid(), "start": _start_time(os.getpid()), "profile": str(directory)}
    pidfile.write_text(json.dumps(owner))
    directory.mkdir(mode=0o700)
    return Profile(directory, pidfile)


def _owner_alive(owner: dict[str, object]) -> bool:
    pid = owner.get("pid")
    if not isinstance(pid, int):
        return False
    start = _start_time(pid)
    return start is not None and start == owner.get("start")


def processes_using(profile: Path) -> list[int]:
    """Pids whose command line names `profile` as their user data directory."""
    needle = f"--user-data-dir={profile}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                args = fh.read().split(b"\0")
        except OSError:
            continue
        if needle in args:
            found.append(int(entry.name))
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL `pid` and, when it leads one, its process group (Chromium's helpers)."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def reap_orphans(root: Path) -> list[int]:
    """Kill the browsers of owners that are gone; returns the pids signalled."""
    if not root.is_dir():
        return []
    killed: list[int] = []
    for pidfile in root.glob(f"*{PIDFILE_SUFFIX}"):
        try:
            owner = json.loads(pidfile.read_text())
        except (OSError, ValueError):
            owner = {}
        if _owner_alive(owner):
            continue
        directory = root / pidfile.name.removesuffix(PIDFILE_SUFFIX)
        for pid in processes_using(directory):
            killed.append(pid)
            kill_tree(pid)
        Profile(directory, pidfile).release()
    return killed


__all__ = ["Profile", "kill_tree", "new_profile", "processes_using", "reap_orphans"]
