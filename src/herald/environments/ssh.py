"""`SshEnvironment`: commands and files on another host, through the system
``ssh`` client.

One multiplexed connection (``ControlMaster=auto`` with ``ControlPersist``)
carries every command, so a call costs a round trip, not a handshake. Each
command runs under ``setsid`` on the remote and reports its process-group id
first; a timeout or an interrupt kills that remote group (then the local
client), so a killed ``sleep 600`` really dies on the remote host.

Failures of ssh itself (exit status 255: refused, unreachable, authentication)
raise `EnvironmentConnectionError`, distinct from a command's own failure.
Nothing from Herald's environment is sent: the remote shell starts with the
environment sshd gives it, so Herald's secrets never reach it.
"""

from __future__ import annotations

import os
import posixpath
import secrets as _random
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence

from herald.environments import _ssh_scripts as scripts
from herald.environments._background import PipedBackgroundProcess
from herald.environments._output import DEFAULT_MAX_OUTPUT_BYTES, ActivityThrottle, OutputCollector
from herald.environments._streaming import MarkerFilter, StreamPump, supervise
from herald.environments.base import (
    ActivityCallback,
    BackgroundProcess,
    Environment,
    EnvironmentConnectionError,
    ExecResult,
    FileInfo,
)
from herald.environments.child_env import NON_INTERACTIVE_DEFAULTS, check_env_names

SSH_FAILED = 255
_FILE_OP_TIMEOUT_S = 120.0
_KILL_TIMEOUT_S = 5.0
_PGID_WAIT_S = 1.0  # a kill right after the start waits this long for the group id
_MAX_SSH_STDERR = 16_384


def _short_tmp_dir() -> str:
    # Unix socket paths are limited to ~104 bytes: keep the control dir short.
    return "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()


class SshEnvironment(Environment):
    name = "ssh"

    def __init__(
        self,
        host: str,
        *,
        user: str | None = None,
        port: int = 22,
        identity_file: str | None = None,
        options: Sequence[str] = (),
        cwd: str | None = None,
        control_dir: str | None = None,
        connect_timeout: float = 10.0,
        control_persist: int = 300,
        activity_interval: float = 10.0,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        self.host = host
        self.user = user
        self.port = port
        self._identity_file = os.path.expanduser(identity_file) if identity_file else None
        self._options = list(options)
        self._configured_cwd = cwd
        self._own_control_dir = control_dir is None
        self._control_dir = control_dir or tempfile.mkdtemp(prefix="hsh-", dir=_short_tmp_dir())
        os.chmod(self._control_dir, 0o700)
        self._connect_timeout = connect_timeout
        self._control_persist = control_persist
        self._activity_interval = activity_interval
        self._max_output_bytes = max_output_bytes
        self._home: str | None = None
        self._cwd: str | None = None
        self._connect_lock = threading.Lock()
        self._processes: dict[str, PipedBackgroundProcess] = {}
        self._lock = threading.Lock()

    # -- the ssh client -----------------------------------------------------------

    @property
    def target(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def ssh_argv(self, *extra: str) -> list[str]:
        """The ssh command line. ssh keeps the first value it sees for an option:
        BatchMode (never prompt: a prompt would hang the agent) comes first, then
        the user's options, then Herald's defaults, which those may override."""
        argv = [shutil.which("ssh") or "ssh", "-T", "-p", str(self.port), "-o", "BatchMode=yes"]
        if self._identity_file:
            argv += ["-i", self._identity_file]
        for option in self._options:
            argv += ["-o", option]
        argv += [
            "-o", "ControlMaster=auto",
            "-o", f"ControlPath={self._control_dir}/%C",
            "-o", f"ControlPersist={self._control_persist}",
            "-o", f"ConnectTimeout={max(1, round(self._connect_timeout))}",
            "-o", "LogLevel=ERROR",
            "-o", "ServerAliveInterval=15",
        ]  # fmt: skip
        return [*argv, *extra, "--", self.target]  # "--": a host is never an option

    def _popen(self, remote: str, *, stdin: int, stderr: int) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                [*self.ssh_argv(), remote],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,  # a Ctrl-C in Herald's terminal must not hit it
            )
        except FileNotFoundError:
            raise EnvironmentConnectionError("the ssh client is not installed") from None

    def _connection_error(self, stderr: bytes) -> EnvironmentConnectionError:
        lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        why = lines[-1].strip() if lines else "ssh exited with status 255"
        return EnvironmentConnectionError(f"ssh to {self.target} port {self.port} failed: {why}")

    def run_script(
        self, script: str, *, data: bytes | None = None, timeout: float = _FILE_OP_TIMEOUT_S
    ) -> tuple[int, bytes, bytes]:
        """Run a short remote script; (exit code, stdout, stderr). Raises
        EnvironmentConnectionError when ssh itself fails. The script's stdout
        starts after a marker line, so login noise cannot corrupt file data."""
        proc = self._popen(
            scripts.framed(script),
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            out, err = proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise EnvironmentConnectionError(
                f"ssh to {self.target} did not answer within {timeout:g} s"
            ) from None
        if proc.returncode == SSH_FAILED:
            raise self._connection_error(err)
        body = bytearray()
        markers = MarkerFilter(scripts.MARKER_PREFIX, body.extend)
        markers.feed(out)
        if not markers.values:
            raise EnvironmentConnectionError(
                f"the login shell on {self.target} did not run Herald's command "
                "(a POSIX shell such as bash or sh is needed)"
            )
        return proc.returncode, bytes(body), err

    def connect(self) -> None:
        """Open the shared connection and learn the remote home (idempotent)."""
        with self._connect_lock:
            if self._home is not None:
                return
            code, out, err = self.run_script(
                'printf "%s" "$HOME"', timeout=self._connect_timeout + 10
            )
            if code != 0:
                raise self._connection_error(err)
            self._home = out.decode("utf-8", "replace").strip() or "/"
            self._cwd = self._resolve_with(self._configured_cwd or self._home, self._home)

    # -- commands -----------------------------------------------------------------

    def _prepare(self, command: str, cwd: str | None, env: Mapping[str, str] | None) -> str:
        self.connect()
        workdir = self.resolve(cwd) if cwd else self.cwd
        info = self.stat(workdir)
        if info is None or not info.is_dir:
            raise FileNotFoundError(f"working directory does not exist: {workdir}")
        exports = {**NON_INTERACTIVE_DEFAULTS, **check_env_names(env)}
        return scripts.command_wrapper(command, workdir, exports)

    def _kill_remote_group(self, markers: MarkerFilter, proc: subprocess.Popen[bytes]) -> None:
        pgid = scripts.parse_pgid(markers.values)
        if pgid is not None:
            try:
                self.run_script(scripts.kill_group_script(pgid), timeout=_KILL_TIMEOUT_S)
            except EnvironmentConnectionError:
                pass  # the connection is gone; so is the session's channel
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                proc.kill()

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
        remote = self._prepare(command, cwd, env)
        started = time.monotonic()
        proc = self._popen(remote, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        collector = OutputCollector(self._max_output_bytes)
        markers = MarkerFilter(scripts.MARKER_PREFIX, collector.feed)
        ssh_stderr = bytearray()

        def keep_stderr(data: bytes) -> None:
            if len(ssh_stderr) < _MAX_SSH_STDERR:
                ssh_stderr.extend(data[: _MAX_SSH_STDERR - len(ssh_stderr)])

        pump = StreamPump({proc.stdout.fileno(): markers.feed, proc.stderr.fileno(): keep_stderr})

        def kill() -> None:
            # Killed right after the start: give the wrapper a moment to report its group.
            deadline = time.monotonic() + _PGID_WAIT_S
            while not markers.seen.is_set() and proc.poll() is None and pump.open:
                if time.monotonic() >= deadline:
                    break
                pump.pump(0.02)
            self._kill_remote_group(markers, proc)

        throttle = ActivityThrottle(on_activity, self._activity_interval, started)
        try:
            outcome = supervise(
                proc,
                pump,
                timeout=timeout,
                cancel=cancel,
                kill=kill,
                on_tick=lambda: throttle.tick(collector.last_line),
            )
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:  # pragma: no cover - the client was killed
                proc.kill()
                proc.wait()
        finally:
            pump.close()
            proc.stdout.close()
            proc.stderr.close()
        markers.flush()
        # 255 with ssh's own complaint on stderr is the connection, not the command
        # (the command's stderr is merged into stdout on the remote side).
        if (
            outcome == "exited"
            and proc.returncode == SSH_FAILED
            and (not markers.values or ssh_stderr.strip())
        ):
            raise self._connection_error(bytes(ssh_stderr))
        return ExecResult(
            output=collector.text(),
            exit_code=proc.returncode if outcome == "exited" else None,
            duration_s=time.monotonic() - started,
            timed_out=outcome == "timeout",
            interrupted=outcome == "interrupted",
        )

    def spawn(
        self, command: str, *, cwd: str | None, env: Mapping[str, str] | None = None
    ) -> BackgroundProcess:
        remote = self._prepare(command, cwd, env)
        # stdin stays open: it is the channel write_stdin talks through. The remote
        # side merges the command's stderr into stdout; ssh's own stderr stays apart.
        proc = self._popen(remote, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        markers = MarkerFilter(scripts.MARKER_PREFIX, lambda data: None)

        def kill() -> None:
            markers.seen.wait(_PGID_WAIT_S)
            self._kill_remote_group(markers, proc)

        process = PipedBackgroundProcess(proc, command, kill=kill, markers=markers)
        with self._lock:
            self._processes[process.id] = process
        return process

    def processes(self) -> list[BackgroundProcess]:
        """Background processes started here, oldest first."""
        with self._lock:
            return list(self._processes.values())

    def close(self) -> None:
        """Kill background processes; stop the shared connection when this
        environment created its control dir (a caller-given one is shared)."""
        with self._lock:
            processes = list(self._processes.values())
        for process in processes:
            process.kill()
        if not self._own_control_dir:
            return  # a shared control dir: its owner stops the shared connection
        try:
            subprocess.run(
                self.ssh_argv("-O", "exit"),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=5,
            )
        except (OSError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(self._control_dir, ignore_errors=True)

    # -- files --------------------------------------------------------------------

    def _file_error(self, code: int, path: str, err: bytes) -> OSError:
        if code == scripts.EXIT_MISSING:
            return FileNotFoundError(2, "No such file or directory", path)
        if code == scripts.EXIT_IS_DIR:
            return IsADirectoryError(21, "Is a directory", path)
        if code == scripts.EXIT_DENIED:
            return PermissionError(13, "Permission denied", path)
        detail = err.decode("utf-8", "replace").strip()[:300] or f"exit status {code}"
        return OSError(f"{path}: {detail}")

    def read_bytes(self, path: str, *, max_bytes: int | None = None) -> bytes:
        resolved = self.resolve(path)
        code, out, err = self.run_script(scripts.read_script(resolved, max_bytes))
        if code != 0:
            raise self._file_error(code, resolved, err)
        return out

    def write_bytes(self, path: str, data: bytes) -> None:
        resolved = self.resolve(path)
        script = scripts.write_script(resolved, _random.token_hex(4))
        code, _, err = self.run_script(script, data=data)
        if code != 0:
            raise self._file_error(code, resolved, err)

    def stat(self, path: str) -> FileInfo | None:
        resolved = self.resolve(path)
        code, out, err = self.run_script(scripts.stat_script(resolved))
        if code == scripts.EXIT_MISSING:
            return None
        if code != 0:
            raise self._file_error(code, resolved, err)
        size, mode, mtime = out.decode("ascii", "replace").split()[:3]
        return FileInfo(
            path=resolved,
            size=int(size),
            is_dir=(int(mode, 16) & 0o170000) == 0o040000,
            mtime=float(mtime),
        )

    def _resolve_with(self, path: str, base: str) -> str:
        home = self._home or "/"
        if path == "~" or path.startswith("~/"):
            path = home + path[1:]
        return posixpath.normpath(posixpath.join(base, path))

    def resolve(self, path: str, cwd: str | None = None) -> str:
        base = self._resolve_with(cwd, self.cwd) if cwd else self.cwd
        return self._resolve_with(path, base)

    @property
    def cwd(self) -> str:
        if self._cwd is None:
            self.connect()
        assert self._cwd is not None
        return self._cwd
