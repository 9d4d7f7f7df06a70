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
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from herald.environments._channel import ShellChannelEnvironment
from herald.environments._output import DEFAULT_MAX_OUTPUT_BYTES
from herald.environments.base import EnvironmentConnectionError

SSH_FAILED = 255


def _short_tmp_dir() -> str:
    # Unix socket paths are limited to ~104 bytes: keep the control dir short.
    return "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()


class SshEnvironment(ShellChannelEnvironment):
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
        super().__init__(
            cwd=cwd,
            connect_timeout=connect_timeout,
            activity_interval=activity_interval,
            max_output_bytes=max_output_bytes,
        )
        self.host = host
        self.user = user
        self.port = port
        self._identity_file = os.path.expanduser(identity_file) if identity_file else None
        self._options = list(options)
        self._own_control_dir = control_dir is None
        self._control_dir = control_dir or tempfile.mkdtemp(prefix="hsh-", dir=_short_tmp_dir())
        os.chmod(self._control_dir, 0o700)
        self._control_persist = control_persist

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

    def _client_failed(self, returncode: int, marker_seen: bool, stderr: bytes) -> bool:
        # 255 with ssh's own complaint on stderr is the connection, not the command
        # (a command's own exit 255 comes after the marker, with nothing on stderr).
        return returncode == SSH_FAILED and (not marker_seen or bool(stderr.strip()))

    def close(self) -> None:
        """Kill background processes; stop the shared connection when this
        environment created its control dir (a caller-given one is shared)."""
        super().close()
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
