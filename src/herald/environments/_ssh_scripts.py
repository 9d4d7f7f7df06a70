"""The small POSIX shell scripts the ssh, docker and bwrap backends run where
the commands run (the remote host, the container, the sandbox).

Every value is quoted with `shlex.quote`; nothing from the model is ever
spliced into a script unquoted. The remote needs bash, setsid (util-linux)
and GNU coreutils, which every mainstream Linux has.
"""

from __future__ import annotations

import secrets as _random
import shlex
import stat
from collections.abc import Mapping

from herald.environments.base import FileInfo, NotRegularFileError

# Control lines the wrapper prints before the command's output: \037 (unit
# separator) cannot start ordinary output by accident.
MARKER_PREFIX = b"\x1fHERALD:"
_MARKER_PRINTF = r"'\037HERALD:%s\n'"

# Exit codes of the file scripts (255 is ssh's own, so never used here).
EXIT_MISSING = 3
EXIT_IS_DIR = 4
EXIT_DENIED = 5
EXIT_FAILED = 6
EXIT_NOT_REGULAR = 7

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
        f'[ -d "$p" ] && exit {EXIT_IS_DIR}; [ -f "$p" ] || exit {EXIT_NOT_REGULAR}; '
        f'[ -r "$p" ] || exit {EXIT_DENIED}; exec {reader} -- "$p"'
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


def file_error(code: int, path: str, err: bytes) -> OSError:
    """The OSError a file script's exit code stands for."""
    if code == EXIT_MISSING:
        return FileNotFoundError(2, "No such file or directory", path)
    if code == EXIT_IS_DIR:
        return IsADirectoryError(21, "Is a directory", path)
    if code == EXIT_DENIED:
        return PermissionError(13, "Permission denied", path)
    if code == EXIT_NOT_REGULAR:
        return NotRegularFileError(path)
    detail = err.decode("utf-8", "replace").strip()[:300] or f"exit status {code}"
    if "read-only file system" in detail.lower():
        return PermissionError(13, "Read-only file system", path)
    return OSError(f"{path}: {detail}")


class ScriptFileOps:
    """`read_bytes`, `write_bytes` and `stat` through the backend's `run_script`
    (a mixin for backends that run a shell where the files live)."""

    def run_script(self, script: str, *, data: bytes | None = None) -> tuple[int, bytes, bytes]:
        raise NotImplementedError

    def resolve(self, path: str, cwd: str | None = None) -> str:
        raise NotImplementedError

    def read_bytes(self, path: str, *, max_bytes: int | None = None) -> bytes:
        resolved = self.resolve(path)
        code, out, err = self.run_script(read_script(resolved, max_bytes))
        if code != 0:
            raise file_error(code, resolved, err)
        return out

    def write_bytes(self, path: str, data: bytes) -> None:
        resolved = self.resolve(path)
        code, _, err = self.run_script(write_script(resolved, _random.token_hex(4)), data=data)
        if code != 0:
            raise file_error(code, resolved, err)

    def stat(self, path: str) -> FileInfo | None:
        resolved = self.resolve(path)
        code, out, err = self.run_script(stat_script(resolved))
        if code == EXIT_MISSING:
            return None
        if code != 0:
            raise file_error(code, resolved, err)
        size, mode, mtime = out.decode("ascii", "replace").split()[:3]
        return FileInfo(
            path=resolved,
            size=int(size),
            is_dir=stat.S_ISDIR(int(mode, 16)),
            mtime=float(mtime),
            is_regular=stat.S_ISREG(int(mode, 16)),
        )
