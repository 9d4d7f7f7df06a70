"""Shared judgements about what a path or a pattern *is*, used by the
effect-based rule families (network, persistence, data loss, containers,
supply chain, processes): is a path inside the working tree or a scratch
area, is it a system location, does a process pattern reach Herald.

Rules describe effects, not spellings: "this command empties a file outside
the project", not "this command is `: > x`". These helpers are that shared
vocabulary, so every family answers "where" the same way.
"""

from __future__ import annotations

import posixpath
import re

from herald.safety.invocation import Context
from herald.safety.paths import Target, canonical, classify_delete_target

# Scratch areas: emptying or overwriting files there loses nothing anyone keeps.
_SCRATCH = ("/tmp", "/var/tmp", "/private/tmp", "/dev/shm", "/private/var/folders",
            "/var/folders")  # fmt: skip
_HERALD_SCRATCH = ("~/.herald/cache", "~/.herald/logs")

# System locations outside /etc (which `sensitive_target` already covers):
# programs, libraries, boot files, system state, kernel tunables, macOS
# system and launch-daemon folders.
_SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
                 "/var", "/private/var", "/System", "/Library", "/proc/sys", "/sys",
                 "/snap", "/nix/store")  # fmt: skip
# Parts of /var that are data or scratch rather than the system itself.
_VAR_ORDINARY = ("tmp", "log", "cache", "www", "folders", "mail", "backups")


def _under(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def resolved(path: str, ctx: Context) -> str:
    """Canonical form of path as the command would see it (cwd applied)."""
    return canonical(ctx.resolve(path.strip()), ctx.env)


def in_scratch(path: str, ctx: Context) -> bool:
    p = resolved(path, ctx)
    scratch = (*_SCRATCH, *(canonical(s, ctx.env) for s in _HERALD_SCRATCH))
    return any(_under(p, s) for s in scratch) or p.startswith("/dev/")


def in_workdir(path: str, ctx: Context) -> bool:
    """path lies inside the directory the command starts in (its PWD), or is
    relative without climbing out of it. Unknown PWD: only relative paths."""
    if not path or path.startswith("-"):
        return False
    p = resolved(path, ctx)
    if not p.startswith("/"):
        parts = p.split("/")
        return ".." not in parts and "$" not in p
    start = (ctx.env or {}).get("PWD")
    if not start:
        return False
    base = canonical(start, ctx.env)
    if classify_delete_target(base, ctx.env) is not Target.OTHER:
        return False  # a PWD of ~ or / does not make the whole home "the project"
    return _under(p, base)


def outside_project(path: str, ctx: Context) -> bool:
    """Neither in the working tree nor in a scratch area: data someone keeps."""
    return bool(path) and not in_workdir(path, ctx) and not in_scratch(path, ctx)


def system_location(path: str, ctx: Context) -> str | None:
    """The system root a path is under (``/usr``), or None."""
    p = resolved(path, ctx)
    if not p.startswith("/"):
        return None
    for root in _SYSTEM_ROOTS:
        if _under(p, root):
            if root in ("/var", "/private/var"):
                rest = p[len(root) + 1 :].split("/", 1)[0]
                if not rest or rest in _VAR_ORDINARY or rest == "root":
                    return None  # /var/root is a home: `sensitive_target` judges it
            return root
    return None


# -- processes ------------------------------------------------------------------

# How Herald's gateway shows up in a process table, by full command line
# (pkill -f, pgrep -f) and by process name (pkill, killall, pidof).
HERALD_CMDLINES = (
    "/home/user/.local/bin/herald gateway run",
    "/usr/bin/python3 /home/user/.venv/bin/herald gateway start",
    "python3 -m herald gateway",
    "/opt/homebrew/bin/python3.12 -m herald.gateway --port 8642",
)
HERALD_NAMES = ("herald", "python3", "python", "python3.12", "python3.11", "python3.13", "Python")
# Processes whose loss ends the user's session or the machine's service.
CRITICAL_CMDLINES = (
    "/sbin/init splash", "/lib/systemd/systemd --user", "/usr/sbin/sshd -D",
    "sshd: user@pts/0", "-bash", "/bin/bash --login", "-zsh", "/usr/bin/dockerd -H fd://",
    "/usr/bin/containerd", "/usr/lib/xorg/Xorg :0", "/usr/bin/gnome-shell", "tmux: server",
    "/usr/lib/systemd/systemd-journald", "/usr/sbin/NetworkManager --no-daemon",
    "/usr/sbin/cron -f", "/usr/lib/openssh/sftp-server", "login -- user", "sudo su",
    "/usr/bin/dbus-daemon --session", "/System/Library/CoreServices/Finder.app",
    "/System/Library/CoreServices/loginwindow.app", "WindowServer -daemon",
)  # fmt: skip
CRITICAL_NAMES = ("init", "systemd", "sshd", "bash", "zsh", "sh", "dockerd", "containerd", "Xorg",
                  "gnome-shell", "tmux: server", "cron", "dbus-daemon", "login", "sudo",
                  "NetworkManager", "Finder", "loginwindow", "WindowServer", "launchd")  # fmt: skip


def _pattern_hits(
    pattern: str, samples: tuple[str, ...], *, exact: bool, ignore_case: bool
) -> bool:
    if exact:
        return any((pattern.lower() == s.lower()) if ignore_case else pattern == s for s in samples)
    try:
        regex = re.compile(pattern[:200], re.I if ignore_case else 0)
    except re.error:
        regex = re.compile(re.escape(pattern[:200]), re.I if ignore_case else 0)
    return any(regex.search(s) for s in samples)


def pattern_reaches(
    pattern: str, *, full: bool, exact: bool = False, ignore_case: bool = False
) -> str | None:
    """What a process pattern would also kill: ``"herald"`` when it matches
    Herald's own gateway however it was started, ``"broad"`` when it
    matches session or system processes (or almost anything), else None.

    full: the pattern is matched against whole command lines (pkill -f);
    otherwise against process names (pkill, pidof). exact: killall's and
    pidof's whole-name comparison instead of a regex search.
    """
    if not pattern:
        return "broad"
    herald_samples = HERALD_CMDLINES if full else HERALD_NAMES
    if "herald" in pattern.lower() or "gateway" in pattern.lower():
        return "herald"
    if _pattern_hits(pattern, herald_samples, exact=exact, ignore_case=ignore_case):
        return "herald"
    critical = CRITICAL_CMDLINES if full else CRITICAL_NAMES
    if _pattern_hits(pattern, critical, exact=exact, ignore_case=ignore_case):
        return "broad"
    if not exact and len(posixpath.basename(pattern).strip("^$.*+?[]()|\\")) < 2:
        return "broad"  # '.', '.*', '^', 'a': matches nearly every process
    return None
