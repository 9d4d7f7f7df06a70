"""`LocalEnvironment`: commands run as child processes of Herald, files are local.

Every command runs in its own session (so its own process group): a timeout or
an interrupt kills the command and everything it started, not just the shell.
The child's environment is Herald's minus every secret (`child_env`).
"""

from __future__ import annotations

import os
import secrets as _random
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Mapping

from herald.config import Secrets
from herald.environments._background import PipedBackgroundProcess, ProcessTable
from herald.environments._output import DEFAULT_MAX_OUTPUT_BYTES, ActivityThrottle, OutputCollector
from herald.environments._streaming import (
    StreamPump,
    kill_process_group,
    shell_exit_code,
    supervise,
)
from herald.environments.base import (
    ActivityCallback,
    BackgroundProcess,
    Environment,
    ExecResult,
    FileInfo,
    NotRegularFileError,
)
from herald.environments.child_env import build_child_env


def drive_to_completion(
    proc: subprocess.Popen[bytes],
    *,
    started: float,
    timeout: float,
    cancel: threading.Event | None,
    on_activity: ActivityCallback | None,
    activity_interval: float,
    max_output_bytes: int,
) -> ExecResult:
    """Collect a local child's output (its own process group, stdout and stderr
    on one pipe) until it exits; timeout and cancel kill the whole group."""
    assert proc.stdout is not None
    collector = OutputCollector(max_output_bytes)
    pump = StreamPump({proc.stdout.fileno(): collector.feed})
    throttle = ActivityThrottle(on_activity, activity_interval, started)
    try:
        outcome = supervise(
            proc,
            pump,
            timeout=timeout,
            cancel=cancel,
            kill=lambda: kill_process_group(proc.pid, proc),
            on_tick=lambda: throttle.tick(collector.last_line),
        )
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
            proc.kill()
            proc.wait()
    finally:
        pump.close()
        proc.stdout.close()
    return ExecResult(
        output=collector.text(),
        exit_code=shell_exit_code(proc.returncode) if outcome == "exited" else None,
        duration_s=time.monotonic() - started,
        timed_out=outcome == "timeout",
        interrupted=outcome == "interrupted",
    )


def _bash() -> str:
    return shutil.which("bash") or "/bin/bash"


class LocalEnvironment(Environment):
    name = "local"

    def __init__(
        self,
        cwd: str | None = None,
        *,
        secrets: Secrets | None = None,
        base_env: Mapping[str, str] | None = None,
        activity_interval: float = 10.0,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        self._cwd = os.path.normpath(os.path.abspath(os.path.expanduser(cwd or os.getcwd())))
        self._secrets = secrets
        self._base_env = dict(base_env) if base_env is not None else None
        self._activity_interval = activity_interval
        self._max_output_bytes = max_output_bytes
        self._background = ProcessTable()

    # -- commands -----------------------------------------------------------------

    def child_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return build_child_env(self._secrets, extra, base=self._base_env)

    def _workdir(self, cwd: str | None) -> str:
        workdir = self.resolve(cwd) if cwd else self._cwd
        if not os.path.isdir(workdir):
            raise FileNotFoundError(f"working directory does not exist: {workdir}")
        return workdir

    def execute(
        self,
        command: str,
        *,
        cwd: str | None,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cancel: threading.Event | None = None,
        on_activity: ActivityCallback | None = None,
    ) -> ExecResult:
        workdir = self._workdir(cwd)
        child_env = self.child_env(env)
        started = time.monotonic()
        proc = subprocess.Popen(
            [_bash(), "-c", command],
            cwd=workdir,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # interleaved, as a terminal shows them
            start_new_session=True,
        )
        return drive_to_completion(
            proc,
            started=started,
            timeout=timeout,
            cancel=cancel,
            on_activity=on_activity,
            activity_interval=self._activity_interval,
            max_output_bytes=self._max_output_bytes,
        )

    def spawn(
        self, command: str, *, cwd: str | None, env: Mapping[str, str] | None = None
    ) -> BackgroundProcess:
        proc = subprocess.Popen(
            [_bash(), "-c", command],
            cwd=self._workdir(cwd),
            env=self.child_env(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        process = PipedBackgroundProcess(
            proc, command, kill=lambda: kill_process_group(proc.pid, proc)
        )
        return self._background.add(process)

    def processes(self) -> list[BackgroundProcess]:
        """Background processes started here, oldest first."""
        return self._background.all()

    def close(self) -> None:
        self._background.kill_all()

    # -- files --------------------------------------------------------------------

    def read_bytes(self, path: str, *, max_bytes: int | None = None) -> bytes:
        resolved = self.resolve(path)
        # Opened without blocking: opening a named pipe waits for a writer otherwise.
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(21, "Is a directory", resolved)
            if not stat.S_ISREG(mode):
                raise NotRegularFileError(resolved)
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb") as fh:
                fd = -1  # the file object closes it
                return fh.read() if max_bytes is None else fh.read(max_bytes)
        finally:
            if fd >= 0:
                os.close(fd)

    def write_bytes(self, path: str, data: bytes) -> None:
        # Write through symlinks to their target, so a link is not replaced by a file.
        target = os.path.realpath(self.resolve(path))
        if os.path.isdir(target):
            raise IsADirectoryError(f"is a directory: {target}")
        directory = os.path.dirname(target)
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".{os.path.basename(target)}.herald-{_random.token_hex(4)}")
        # 0o666 lets the umask decide a new file's mode, as for any editor.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.chmod(tmp, os.stat(target).st_mode & 0o7777)  # keep an existing file's mode
            except FileNotFoundError:
                pass
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def stat(self, path: str) -> FileInfo | None:
        resolved = self.resolve(path)
        try:
            st = os.stat(resolved)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return FileInfo(
            path=resolved,
            size=st.st_size,
            is_dir=os.path.isdir(resolved),
            mtime=st.st_mtime,
            is_regular=stat.S_ISREG(st.st_mode),
        )

    def resolve(self, path: str, cwd: str | None = None) -> str:
        expanded = os.path.expanduser(path)
        base = os.path.join(self._cwd, os.path.expanduser(cwd)) if cwd else self._cwd
        return os.path.normpath(os.path.join(base, expanded))

    @property
    def cwd(self) -> str:
        return self._cwd
