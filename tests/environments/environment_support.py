"""Helpers for the environment tests: a throwaway OpenSSH server on 127.0.0.1,
the fake secret, and an `SshEnvironment` pointed at the server.

Keys, config, authorized_keys, pid file and known_hosts all live in one tmp
directory; the server runs in the foreground (``-D``) as a child of the test
process and is terminated at the end of the session.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from herald.environments import SshEnvironment

PRIVSEP_DIR = Path("/run/sshd")
FAKE_SECRET_NAME = "HERALD_FAKE_SERVICE_TOKEN"
FAKE_SECRET_VALUE = "zq-fake-secret-7f3a9c1e"


def require_bwrap() -> None:
    """Skip unless bubblewrap can create its namespaces here."""
    from herald.environments.bwrap import find_bwrap

    if find_bwrap() is None:
        pytest.skip("bubblewrap is not installed (apt-get install -y bubblewrap)")
    probe = subprocess.run(
        ["bwrap", "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"],
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"bwrap cannot create namespaces here: {probe.stderr.decode().strip()}")


TEST_DOCKER_IMAGE = "debian:bookworm-slim"  # has bash and setsid, as the backend needs


def require_docker() -> None:
    """Skip unless a Docker daemon answers here (the docker tests then run for real)."""
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("the docker CLI is not installed")
    try:
        info = subprocess.run(
            [docker, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=15,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("no Docker daemon reachable: docker info timed out")
    if info.returncode != 0:
        why = (info.stderr.strip().splitlines() or ["docker info failed"])[-1]
        pytest.skip(f"no Docker daemon reachable: {why}")


def find_sshd() -> str | None:
    return shutil.which("sshd") or next(
        (p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.path.exists(p)), None
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "herald-test", "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )


@dataclass
class SshdServer:
    root: Path
    port: int
    user: str
    client_key: Path
    known_hosts: Path
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.root / "sshd.log"

    @property
    def remote_home(self) -> Path:
        return self.root / "remote-home"

    @property
    def client_options(self) -> list[str]:
        return [
            "StrictHostKeyChecking=no",
            f"UserKnownHostsFile={self.known_hosts}",
            "IdentitiesOnly=yes",
        ]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_sshd(root: Path, sshd: str) -> SshdServer:
    root.mkdir(parents=True, exist_ok=True)
    host_key, client_key = root / "host_ed25519", root / "client_ed25519"
    _keygen(host_key)
    _keygen(client_key)
    authorized = root / "authorized_keys"
    authorized.write_text((root / "client_ed25519.pub").read_text())
    authorized.chmod(0o600)
    # sshd run as root refuses to start without its privilege-separation directory
    # (run unprivileged it neither needs nor could create it).
    if os.geteuid() == 0:
        PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    port = _free_port()
    # The remote sessions' $HOME: anything a test writes to "~" stays in tmp.
    remote_home = root / "remote-home"
    remote_home.mkdir()
    config = root / "sshd_config"
    config.write_text(
        "\n".join(
            [
                "ListenAddress 127.0.0.1",
                f"Port {port}",
                f"HostKey {host_key}",
                f"AuthorizedKeysFile {authorized}",
                f"PidFile {root / 'sshd.pid'}",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes",
                "PermitRootLogin prohibit-password",
                "UsePAM no",
                "StrictModes no",
                "PrintMotd no",
                "MaxStartups 64",
                f"SetEnv HOME={remote_home}",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    server = SshdServer(root, port, getpass.getuser(), client_key, root / "known_hosts")
    with open(server.log, "wb") as log:
        server.proc = subprocess.Popen(
            [sshd, "-D", "-e", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"sshd exited at start: {server.log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return server
        except OSError:
            time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"sshd did not listen on port {port}: {server.log.read_text()[-2000:]}")


def ssh_environment(
    server: SshdServer, control_dir: str | None, **kwargs: object
) -> SshEnvironment:
    """An SshEnvironment logged in to `server` as the current user."""
    return SshEnvironment(
        "127.0.0.1",
        user=server.user,
        port=server.port,
        identity_file=str(server.client_key),
        options=server.client_options,
        control_dir=control_dir,
        **kwargs,  # type: ignore[arg-type]
    )


def wait_for_file(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def _pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def host_pid(backend: object, pid: int) -> int:
    """The host pid of a pid a command printed: the same on local and ssh; inside a
    bwrap sandbox (its own pid namespace) found through the NSpid lines of the
    processes in the namespaces of the backend's running sandboxes (a docker
    container's likewise, when its daemon runs on this machine)."""
    if getattr(backend, "name", "") not in ("bwrap", "docker"):
        return pid
    own = _pid_namespace(os.getpid())
    namespaces: set[str] = set()
    for monitor in backend.sandbox_pids():  # type: ignore[attr-defined]
        try:
            children = Path(f"/proc/{monitor}/task/{monitor}/children").read_text().split()
        except OSError:
            children = []
        # bwrap's monitor is in our namespace, its child is the sandbox's pid 1;
        # a container's init is already inside the container's namespace.
        found = {_pid_namespace(int(p)) for p in [monitor, *children]}
        namespaces |= {ns for ns in found if ns and ns != own}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or _pid_namespace(int(entry.name)) not in namespaces:
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("NSpid:") and int(line.split()[-1]) == pid:
                return int(entry.name)
    raise AssertionError(f"no process {pid} in the sandboxes of {backend!r}")


def is_dead(pid: int) -> bool:
    """Gone, or a zombie waiting to be reaped by init (which cannot run any more)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # gone, or reaped between open and read
        return True
    return state in ("Z", "X")


def wait_dead(pid: int, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_dead(pid):
            return True
        time.sleep(0.02)
    return is_dead(pid)
