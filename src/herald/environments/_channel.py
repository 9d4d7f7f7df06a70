"""`ShellChannelEnvironment`: commands and files somewhere else, reached through
a client that runs a shell script there (``ssh HOST``, ``docker exec CONTAINER``).

Each command runs under ``setsid`` on the far side and reports its
process-group id first (a marker line); a timeout or an interrupt kills that
group there (then the local client), so a killed ``sleep 600`` really dies.
File operations are small scripts (`_ssh_scripts`) whose output starts after
a marker, so login noise cannot corrupt file data. A subclass supplies the
client (`_popen`), how to tell the client's own failure from the command's
(`_client_failed`) and the error it raises for it (`_connection_error`).
"""

from __future__ import annotations

import posixpath
import subprocess
import threading
import time
from abc import abstractmethod
from collections.abc import Mapping

from herald.environments._background import PipedBackgroundProcess, ProcessTable
from herald.environments._output import DEFAULT_MAX_OUTPUT_BYTES, ActivityThrottle, OutputCollector
from herald.environments._ssh_scripts import (
    MARKER_PREFIX,
    ScriptFileOps,
    command_wrapper,
    framed,
    kill_group_script,
    parse_pgid,
)
from herald.environments._streaming import MarkerFilter, StreamPump, supervise
from herald.environments.base import (
    ActivityCallback,
    BackgroundProcess,
    Environment,
    EnvironmentConnectionError,
    ExecResult,
)
from herald.environments.child_env import NON_INTERACTIVE_DEFAULTS, check_env_names

FILE_OP_TIMEOUT_S = 120.0
_KILL_TIMEOUT_S = 5.0
_PGID_WAIT_S = 1.0  # a kill right after the start waits this long for the group id
_MAX_CLIENT_STDERR = 16_384


class ShellChannelEnvironment(ScriptFileOps, Environment):
    def __init__(
        self,
        *,
        cwd: str | None,
        connect_timeout: float,
        activity_interval: float,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        self._configured_cwd = cwd
        self._connect_timeout = connect_timeout
        self._activity_interval = activity_interval
        self._max_output_bytes = max_output_bytes
        self._home: str | None = None
        self._cwd: str | None = None
        self._connect_lock = threading.Lock()
        self._background = ProcessTable()

    # -- what a subclass provides ---------------------------------------------------

    @property
    @abstractmethod
    def target(self) -> str:
        """Where commands run, for messages (``user@host``, a container name)."""

    @abstractmethod
    def _popen(self, remote: str, *, stdin: int, stderr: int) -> subprocess.Popen[bytes]:
        """Start the client running the shell script `remote` on the far side."""

    @abstractmethod
    def _client_failed(self, returncode: int, marker_seen: bool, stderr: bytes) -> bool:
        """Whether the client itself failed (not the command it ran)."""

    @abstractmethod
    def _connection_error(self, stderr: bytes) -> EnvironmentConnectionError: ...

    # -- scripts ----------------------------------------------------------------------

    def run_script(
        self, script: str, *, data: bytes | None = None, timeout: float = FILE_OP_TIMEOUT_S
    ) -> tuple[int, bytes, bytes]:
        """Run a short script on the far side; (exit code, stdout, stderr). Raises
        EnvironmentConnectionError when the client fails. The script's stdout
        starts after a marker line, so login noise cannot corrupt file data."""
        proc = self._popen(
            framed(script),
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            out, err = proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise EnvironmentConnectionError(
                f"{self.target} did not answer within {timeout:g} s"
            ) from None
        body = bytearray()
        markers = MarkerFilter(MARKER_PREFIX, body.extend)
        markers.feed(out)
        markers.flush()
        if self._client_failed(proc.returncode, bool(markers.values), err):
            raise self._connection_error(err)
        if not markers.values:
            raise EnvironmentConnectionError(
                f"the shell on {self.target} did not run Herald's command "
                "(a POSIX shell such as bash or sh is needed)"
            )
        return proc.returncode, bytes(body), err

    def connect(self) -> None:
        """Reach the far side and learn its home (idempotent)."""
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
        return command_wrapper(command, workdir, exports)

    def _kill_remote_group(self, markers: MarkerFilter, proc: subprocess.Popen[bytes]) -> None:
        pgid = parse_pgid(markers.values)
        if pgid is not None:
            try:
                self.run_script(kill_group_script(pgid), timeout=_KILL_TIMEOUT_S)
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
        markers = MarkerFilter(MARKER_PREFIX, collector.feed)
        client_stderr = bytearray()

        def keep_stderr(data: bytes) -> None:
            if len(client_stderr) < _MAX_CLIENT_STDERR:
                client_stderr.extend(data[: _MAX_CLIENT_STDERR - len(client_stderr)])

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
        # The command's stderr is merged into stdout on the far side: what arrives on
        # the client's stderr is the client's own complaint.
        if outcome == "exited" and self._client_failed(
            proc.returncode, bool(markers.values), bytes(client_stderr)
        ):
            raise self._connection_error(bytes(client_stderr))
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
        # stdin stays open: it is the channel write_stdin talks through. The far
        # side merges the command's stderr into stdout; the client's stays apart.
        proc = self._popen(remote, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        markers = MarkerFilter(MARKER_PREFIX, lambda data: None)

        def kill() -> None:
            markers.seen.wait(_PGID_WAIT_S)
            self._kill_remote_group(markers, proc)

        process = PipedBackgroundProcess(proc, command, kill=kill, markers=markers)
        return self._background.add(process)

    def processes(self) -> list[BackgroundProcess]:
        """Background processes started here, oldest first."""
        return self._background.all()

    def close(self) -> None:
        """Kill the background processes."""
        self._background.kill_all()

    # -- files --------------------------------------------------------------------

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
