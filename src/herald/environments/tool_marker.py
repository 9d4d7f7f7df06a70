"""Whether this process was started, however indirectly, by an agent's tool call.

The command checker (`herald.safety`) judges a command line; it cannot see inside a
script the model wrote and then ran (``bash ./x.sh``). So every command a backend
starts for a tool carries `TOOL_CALL_MARKER` in its environment, set after anything the
caller passed (the model cannot override it), and Herald's posture-changing admin
commands ask `started_by_tool_call` before acting. A script that unsets the variable
does not escape: on Linux the marker is also looked for in the *initial* environment of
every ancestor process (``/proc/PID/environ`` does not change when a shell unsets a
variable), and the shell the tool started is an ancestor of whatever it runs.

This is defence in depth behind the command checker, not a sandbox: a process that
clears the variable and then replaces its shell (``exec env -u … herald``, or a shell's
last command, which bash may exec) or detaches from its parent (double fork) and clears
its environment is not seen here; only a kernel-enforced boundary (another user, a
sandbox backend without Herald's home) closes that.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TOOL_CALL_MARKER = "HERALD_TOOL_CALL"
_MAX_ANCESTORS = 64


def _parent_of(pid: int, proc: Path) -> int | None:
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid …": comm may hold spaces and parentheses
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def _environ_has_marker(pid: int, proc: Path) -> bool:
    try:
        raw = (proc / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    prefix = TOOL_CALL_MARKER.encode() + b"="
    return any(entry.startswith(prefix) for entry in raw.split(b"\0"))


def started_by_tool_call(
    environ: Mapping[str, str] | None = None, *, proc: Path = Path("/proc")
) -> bool:
    """True when this process or one of its ancestors was started for a tool call."""
    if TOOL_CALL_MARKER in (os.environ if environ is None else environ):
        return True
    if not proc.is_dir():
        return False
    pid: int | None = os.getpid()
    for _ in range(_MAX_ANCESTORS):
        if pid is None or pid <= 1:
            return False
        if _environ_has_marker(pid, proc):
            return True
        pid = _parent_of(pid, proc)
    return False


__all__ = ["TOOL_CALL_MARKER", "started_by_tool_call"]
