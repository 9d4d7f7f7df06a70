"""`DockerEnvironment`: a session's commands and files in its own container.

The container starts from ``terminal.docker.image`` on first use, is reused
for the session and removed when the session closes or after
``terminal.docker.idle_timeout_seconds`` without use (the next command starts
a fresh one; the working directory is on the host, so only the container's
own files are lost). It sees the working directory and the
``terminal.sandbox.mounts`` at the same paths, nothing else of the host; no
network unless ``terminal.sandbox.network``; memory (the container's total),
pids and CPU-seconds limits from the same keys; every capability dropped but
the few package managers need, and no-new-privileges.

Commands go through the ``docker`` CLI (``docker exec``) exactly as the ssh
backend's go through ``ssh`` (`ShellChannelEnvironment`). Containers carry
labels naming the host and the Herald process that owns them, so a Herald
that crashed leaves nothing behind for long: the next start removes
containers whose owner is gone. No daemon, no CLI or an image that will not
start raises `SandboxUnavailableError`; nothing runs on the host instead.
"""

from __future__ import annotations

import os
import secrets as _random
import shutil
import socket
import subprocess
import threading
import time

from herald.config import ConfigError
from herald.config.home import base_home
from herald.environments._channel import ShellChannelEnvironment
from herald.environments._output import DEFAULT_MAX_OUTPUT_BYTES
from herald.environments.base import EnvironmentConnectionError, SandboxUnavailableError
from herald.environments.protected import (
    Protection,
    UnprotectableError,
    make_placeholders,
    remove_placeholders,
    sandbox_protections,
)
from herald.environments.sandbox_spec import SandboxSpec, hidden_paths, is_within, workdir_problem

LABEL = "herald.sandbox"
OWNER_HOST_LABEL = "herald.owner_host"
OWNER_PID_LABEL = "herald.owner_pid"
_CLI_TIMEOUT_S = 60.0
_NOT_ON_HOST = "Herald does not run anything outside the sandbox instead."
# What apt/pip as the container's root need; everything else is dropped.
_KEPT_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID")


def _owner_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DockerEnvironment(ShellChannelEnvironment):
    name = "docker"
    sandboxed = True

    def __init__(
        self,
        spec: SandboxSpec,
        *,
        image: str,
        idle_timeout: float = 1800,
        secrets: object | None = None,  # nothing of Herald's environment is sent
        docker: str | None = None,
        activity_interval: float = 10.0,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        super().__init__(
            cwd=spec.workdir,
            connect_timeout=_CLI_TIMEOUT_S,
            activity_interval=activity_interval,
            max_output_bytes=max_output_bytes,
        )
        self.spec = spec
        self._host_home = os.path.expanduser("~")
        problem = workdir_problem(spec.workdir, self._host_home)
        if problem:
            raise ConfigError(problem)
        self._placeholders: list[Protection] = []
        self.image = image
        self._idle_timeout = idle_timeout
        self._docker_name = docker
        self.container_name = f"herald-{os.getpid()}-{_random.token_hex(4)}"
        self._container: str | None = None
        self._container_lock = threading.RLock()
        self._idle_timer: threading.Timer | None = None
        self._active = 0
        self._closed = False

    @property
    def sandbox_spec(self) -> SandboxSpec:
        return self.spec

    @property
    def target(self) -> str:
        return f"the container {self.container_name}"

    # -- the container --------------------------------------------------------------

    def _docker(self) -> str:
        found = shutil.which(self._docker_name or "docker")
        if found is None:
            raise SandboxUnavailableError(
                "the docker sandbox cannot start: the docker CLI is not installed or not on "
                "PATH. Install Docker (https://docs.docker.com/engine/install/) or choose "
                f"another backend (herald config set terminal.backend bwrap). {_NOT_ON_HOST}"
            )
        return found

    def _cli(self, *args: str, timeout: float = _CLI_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [self._docker(), *args],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise SandboxUnavailableError(
                f"the docker sandbox cannot start: `docker {args[0]}` did not answer within "
                f"{timeout:g} s. Check the Docker daemon (docker info). {_NOT_ON_HOST}"
            ) from None

    def run_args(self) -> list[str]:
        """`docker run` arguments for this session's container (no daemon needed)."""
        spec = self.spec
        args = ["run", "-d", "--name", self.container_name, "--init"]
        args += ["--label", f"{LABEL}=1", "--label", f"{OWNER_HOST_LABEL}={socket.gethostname()}"]
        args += ["--label", f"{OWNER_PID_LABEL}={os.getpid()}"]
        args += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
        for capability in _KEPT_CAPABILITIES:
            args += ["--cap-add", capability]
        args += ["--network", "bridge" if spec.network else "none"]
        memory = spec.total_memory_mb or spec.memory_mb
        if memory:
            args += ["--memory", f"{memory}m", "--memory-swap", f"{memory}m"]
        if spec.max_processes:
            args += ["--pids-limit", str(spec.max_processes)]
        if spec.cpu_seconds:
            args += ["--ulimit", f"cpu={spec.cpu_seconds}:{spec.cpu_seconds}"]
        args += ["--mount", f"type=bind,source={spec.workdir},target={spec.workdir}"]
        for mount in spec.mounts:
            option = ",readonly" if mount.mode == "ro" else ""
            args += ["--mount", f"type=bind,source={mount.path},target={mount.path}{option}"]
        hidden = self.hidden()
        for item in self.protections(tuple(hidden)):
            option = "" if item.action == "pin" else ",readonly"
            args += ["--mount", f"type=bind,source={item.path},target={item.path}{option}"]
        for path in hidden:
            if os.path.isdir(path) and not os.path.islink(path):
                args += ["--mount", f"type=tmpfs,target={path},tmpfs-size=4096,tmpfs-mode=0500"]
            else:
                args += ["--mount", f"type=bind,source=/dev/null,target={path},readonly"]
        args += ["--workdir", spec.workdir, "--entrypoint", "sleep", self.image, "infinity"]
        return args

    def hidden(self) -> list[str]:
        """Secrets inside the mounts (the container's own /etc is not the host's)."""
        roots = self.spec.visible_roots()
        found = hidden_paths(self.spec, home=self._host_home, herald_home=str(base_home()))
        return [p for p in found if any(is_within(p, root) for root in roots)]

    def protections(self, hidden: tuple[str, ...] = ()) -> list[Protection]:
        """What the container keeps read-only inside its writable mounts."""
        spec = self.spec
        rw_roots = (spec.workdir, *spec.rw_paths_outside_workdir())
        try:
            return sandbox_protections(spec.workdir, rw_roots, self._host_home, hidden)
        except UnprotectableError as exc:
            raise SandboxUnavailableError(
                f"the docker sandbox cannot start: {exc}. {_NOT_ON_HOST}"
            ) from None

    def ensure_container(self) -> str:
        """The running container, started (and orphans removed) on first use."""
        with self._container_lock:
            if self._closed:
                raise SandboxUnavailableError("the sandbox of this session was closed")
            if self._container is not None:
                return self._container
            info = self._cli("info", "--format", "{{.ServerVersion}}", timeout=15)
            if info.returncode != 0:
                why = (info.stderr.strip().splitlines() or ["docker info failed"])[-1]
                raise SandboxUnavailableError(
                    f"the docker sandbox cannot start: no Docker daemon is reachable ({why}). "
                    "Start it (sudo systemctl start docker), check DOCKER_HOST and that you "
                    "may use it (the docker group), or choose terminal.backend bwrap. "
                    + _NOT_ON_HOST
                )
            self.remove_orphans()
            # docker needs every bind source to exist: make the read-only placeholders.
            self._placeholders += make_placeholders(self.protections(tuple(self.hidden())))
            started = self._cli(*self.run_args(), timeout=600)  # may pull the image
            if started.returncode != 0:
                why = started.stderr.strip()[-500:] or f"exit status {started.returncode}"
                raise SandboxUnavailableError(
                    f"the docker sandbox cannot start: the container from {self.image} did "
                    f"not start ({why}). Check terminal.docker.image. {_NOT_ON_HOST}"
                )
            self._container = started.stdout.strip() or self.container_name
            return self._container

    def remove_orphans(self) -> list[str]:
        """Remove Herald containers of this host whose owning process is gone."""
        listed = self._cli(
            "ps", "-a", "--filter", f"label={LABEL}=1",
            "--filter", f"label={OWNER_HOST_LABEL}={socket.gethostname()}",
            "--format", f'{{{{.ID}}}} {{{{.Label "{OWNER_PID_LABEL}"}}}}',
        )  # fmt: skip
        doomed = []
        for line in listed.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit() and not _owner_alive(int(parts[1])):
                doomed.append(parts[0])
        if doomed:
            self._cli("rm", "-f", *doomed)
        return doomed

    def _remove_container(self) -> None:
        with self._container_lock:
            container, self._container = self._container, None
            self._home = None
            self._cwd = None
        if container is not None:
            try:
                self._cli("rm", "-f", container)
            except (SandboxUnavailableError, OSError):
                pass

    def _touch(self, delta: int) -> None:
        """Count commands in flight; arm the idle timer when none is."""
        with self._container_lock:
            self._active += delta
            if self._idle_timer is not None:
                self._idle_timer.cancel()
                self._idle_timer = None
            if self._active == 0 and self._idle_timeout > 0 and not self._closed:
                self._idle_timer = threading.Timer(self._idle_timeout, self._idle_expired)
                self._idle_timer.daemon = True
                self._idle_timer.start()

    def _idle_expired(self) -> None:
        with self._container_lock:
            if self._active or any(p.poll() is None for p in self.processes()):
                return  # busy: the next command re-arms the timer
        self._remove_container()
        remove_placeholders(self._placeholders)
        self._placeholders = []

    @property
    def container(self) -> str | None:
        return self._container

    def sandbox_pids(self) -> list[int]:
        """The host pid of the container's init (for diagnostics and tests)."""
        if self._container is None:
            return []
        found = self._cli("inspect", "--format", "{{.State.Pid}}", self._container)
        pid = found.stdout.strip()
        return [int(pid)] if found.returncode == 0 and pid.isdigit() and pid != "0" else []

    # -- the channel ----------------------------------------------------------------

    def _popen(self, remote: str, *, stdin: int, stderr: int) -> subprocess.Popen[bytes]:
        container = self.ensure_container()
        return subprocess.Popen(
            [self._docker(), "exec", "-i", container, "/bin/sh", "-c", remote],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
        )

    def _client_failed(self, returncode: int, marker_seen: bool, stderr: bytes) -> bool:
        return returncode != 0 and not marker_seen

    def _connection_error(self, stderr: bytes) -> EnvironmentConnectionError:
        lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        why = lines[-1] if lines else "docker exec failed"
        return EnvironmentConnectionError(f"running in {self.target} failed: {why}")

    def execute(self, command, *, cwd, timeout, env=None, cancel=None, on_activity=None):  # type: ignore[no-untyped-def]
        self._touch(+1)
        try:
            return super().execute(
                command, cwd=cwd, timeout=timeout, env=env, cancel=cancel, on_activity=on_activity
            )
        finally:
            self._touch(-1)

    def run_script(self, script, *, data=None, timeout=120.0):  # type: ignore[no-untyped-def]
        self._touch(+1)
        try:
            return super().run_script(script, data=data, timeout=timeout)
        finally:
            self._touch(-1)

    def close(self) -> None:
        """Kill background processes and remove the container."""
        super().close()
        with self._container_lock:
            self._closed = True
            if self._idle_timer is not None:
                self._idle_timer.cancel()
        deadline = time.monotonic() + 1
        while self._active and time.monotonic() < deadline:
            time.sleep(0.02)
        self._remove_container()
        remove_placeholders(self._placeholders)
        self._placeholders = []
