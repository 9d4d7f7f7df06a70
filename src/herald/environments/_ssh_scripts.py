"""The small POSIX shell scripts the ssh backend runs on the remote host.

Every value is quoted with `shlex.quote`; nothing from the model is ever
spliced into a script unquoted. The remote needs bash, setsid (util-linux)
and GNU coreutils, which every mainstream Linux has.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

# Control lines the wrapper prints before the command's output: \037 (unit
# separator) cannot start ordinary output by accident.
MARKER_PREFIX = b"\x1fHERALD:"
_MARKER_PRINTF = r"'\037HERALD:%s\n'"

# Exit codes of the file scripts (255 is ssh's own, so never used here).
EXIT_MISSING = 3
EXIT_IS_DIR = 4
EXIT_DENIED = 5
EXIT_FAILED = 6

q = shlex.quote


def framed(script: str) -> str:
    """`script` preceded by a marker line: its real output starts after it."""
    return f"printf {_MARKER_PRINTF} READY; {script}"


def command_wrapper(command: str, cwd: str, env: Mapping[str, str]) -> str:
    """Run `command` with bash in a new session on the remote, stderr merged into
    stdout, after printing the session's process-group id (so a timeout or an
    interrupt can kill the whole remote group). `setsid -w` passes the exit code on."""
    exports = "".join(f"export {name}={q(value)}; " for name, value in env.items())
    inner = (
        "exec 2>&1; "
        f'printf {_MARKER_PRINTF} "PGID=$$"; '
        f"cd -- {q(cwd)} || exit 1; "
        f"{exports}"
        # Not exec: this shell reports a signal death as 128+N, as a terminal does,
        # where setsid -w would turn it into an error of its own.
        f"bash -c {q(command)}; exit $?"
    )
    return f"exec setsid -w bash -c {q(inner)}"


def parse_pgid(values: list[str]) -> int | None:
    for value in values:
        if value.startswith("PGID="):
            try:
                pgid = int(value[5:])
            except ValueError:
                return None
            return pgid if pgid > 1 else None
    return None


def kill_group_script(pgid: int) -> str:
    """SIGTERM the remote group, SIGKILL it after 100 ms unless it is gone."""
    group = f"-{int(pgid)}"
    return (
        f"kill -TERM -- {group} 2>/dev/null || exit 0; i=0; "
        f"while [ $i -lt 10 ] && kill -0 -- {group} 2>/dev/null; do sleep 0.01; i=$((i+1)); done; "
        f"kill -KILL -- {group} 2>/dev/null; exit 0"
    )


def read_script(path: str, max_bytes: int | None) -> str:
    reader = "cat" if max_bytes is None else f"head -c {int(max_bytes)}"
    return (
        f'p={q(path)}; [ -e "$p" ] || exit {EXIT_MISSING}; '
        f'[ -d "$p" ] && exit {EXIT_IS_DIR}; [ -r "$p" ] || exit {EXIT_DENIED}; '
        f'exec {reader} -- "$p"'
    )


def write_script(path: str, token: str) -> str:
    """Atomic write of stdin to `path`: through symlinks, parents created, an
    existing file's mode kept, temp file + rename in the same directory."""
    return (
        f'p={q(path)}; t=$(readlink -f -- "$p" 2>/dev/null); [ -n "$t" ] || t=$p; '
        f'[ -d "$t" ] && exit {EXIT_IS_DIR}; '
        f'd=$(dirname -- "$t"); mkdir -p -- "$d" 2>/dev/null || exit {EXIT_DENIED}; '
        f'tmp="$d/.$(basename -- "$t").herald-{token}"; '
        f'cat > "$tmp" || {{ rm -f -- "$tmp"; exit {EXIT_FAILED}; }}; '
        f'[ -e "$t" ] && chmod --reference="$t" -- "$tmp" 2>/dev/null; '
        f'mv -f -- "$tmp" "$t" || {{ rm -f -- "$tmp"; exit {EXIT_FAILED}; }}'
    )


def stat_script(path: str) -> str:
    """Prints `size mode-hex mtime`; falls back to whole-second mtimes on old coreutils."""
    fmt = "-L -c '%s %f %.9Y'"
    return (
        f'p={q(path)}; [ -e "$p" ] || exit {EXIT_MISSING}; '
        f'stat {fmt} -- "$p" 2>/dev/null || stat -L -c \'%s %f %Y\' -- "$p"'
    )
