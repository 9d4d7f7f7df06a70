"""Escape tests for the bwrap backend: what a command inside the sandbox cannot
read, write, reach or outlive. Everything is real: bubblewrap, a fake home with
a fake private key, a TCP server on 127.0.0.1, host processes started here.

The working directory sits inside the fake home (the common case: a project
under ~), so the home being hidden while the project is visible is tested too.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from environment_support import host_pid, require_bwrap, wait_dead, wait_for_file

from herald.config import ConfigError, HeraldConfig
from herald.config.schema_terminal import SandboxConfig
from herald.environments import (
    BwrapEnvironment,
    Mount,
    SandboxSpec,
    SandboxUnavailableError,
    create_environment,
)

FAKE_KEY = "-----BEGIN FAKE PRIVATE KEY----- zq-test-key-4471"
FAKE_ENV_SECRET = "zq-herald-env-secret-9931"


@dataclass
class Site:
    home: Path
    herald_home: Path
    work: Path
    outside: Path

    def sandbox(self, *, workdir: Path | None = None, **spec: object) -> BwrapEnvironment:
        settings = {"max_processes": 256, **spec}
        return BwrapEnvironment(
            SandboxSpec(str(workdir or self.work), **settings),  # type: ignore[arg-type]
            home=str(self.home),
            herald_home=str(self.herald_home),
        )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    require_bwrap()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(FAKE_KEY + "\n")
    (home / "notes.txt").write_text("private notes\n")
    herald_home = home / ".herald"
    herald_home.mkdir()
    (herald_home / ".env").write_text(f"OPENAI_API_KEY={FAKE_ENV_SECRET}\n")
    work = home / "project"
    work.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERALD_HOME", str(herald_home))
    yield Site(home, herald_home, work, outside)


@pytest.fixture
def sandbox(site: Site) -> Iterator[BwrapEnvironment]:
    env = site.sandbox()
    yield env
    env.close()


def run(env: BwrapEnvironment, command: str, timeout: float = 30) -> str:
    return env.execute(command, cwd=None, timeout=timeout).output


# -- what cannot be read ------------------------------------------------------------


def test_the_ssh_key_and_heralds_env_cannot_be_read(site: Site, sandbox: BwrapEnvironment) -> None:
    key, env_file = site.home / ".ssh" / "id_rsa", site.herald_home / ".env"
    (site.work / "key-link").symlink_to(key)
    output = run(
        sandbox,
        f"cat ~/.ssh/id_rsa {key} {env_file} key-link {site.home / 'notes.txt'}; "
        f"grep -rs zq- ~ /tmp /etc | head -3",
    )
    listing = run(sandbox, f"ls -a ~ {site.home}")
    assert "zq-test-key" not in output and FAKE_ENV_SECRET not in output
    assert "private notes" not in output
    assert "notes.txt" not in listing and ".ssh" not in listing and ".herald" not in listing
    assert "project" in listing  # the working directory inside the home is there
    for path in (str(key), str(env_file), "key-link"):
        with pytest.raises(FileNotFoundError):
            sandbox.read_bytes(path)
    assert key.read_text().startswith(FAKE_KEY)  # still there on the host


def test_the_home_or_a_directory_holding_it_is_refused_as_working_directory(site: Site) -> None:
    # This test used to run a sandbox with the home as its read-write working
    # directory; that exposed ~/.npmrc and let ~/.bashrc be appended to (issue 27).
    for workdir in (site.home, site.home.parent):
        with pytest.raises(ConfigError, match=r"refuses .* as its working directory"):
            site.sandbox(workdir=workdir)
    with pytest.raises(ConfigError, match="cannot be /"):
        SandboxSpec.from_config(SandboxConfig(), "/")
    if os.geteuid() == 0:  # only root can give a directory to someone else here
        foreign = site.work.parent / "someone-elses"
        foreign.mkdir()
        os.chown(foreign, 54321, 54321)
        with pytest.raises(ConfigError, match="belongs to uid 54321, not to you"):
            site.sandbox(workdir=foreign)
    with pytest.raises(ConfigError, match="your home directory or holds it"):
        SandboxSpec.from_config(SandboxConfig(mounts=[f"{Path.home()}:rw"]), str(site.work))


def test_secret_dirs_that_are_symlinks_are_masked_at_their_target(
    site: Site, tmp_path: Path
) -> None:
    config = site.home / ".config"
    keys = config / "keys-store"
    keys.mkdir(parents=True)
    (keys / "token").write_text("zq-linked-secret\n")
    (config / "gh").symlink_to(keys)  # inside a visible mount: masked at its target
    (config / "rclone").symlink_to(tmp_path / "elsewhere")  # dangling: nothing to mask
    env = site.sandbox(mounts=(Mount(str(config), "ro"),))
    try:
        output = run(env, f"cat {config}/gh/token {keys}/token; ls {config}/rclone; echo END")
    finally:
        env.close()
    assert "zq-linked-secret" not in output and output.endswith("END\n")


def test_system_secrets_and_runtime_sockets_are_not_there(sandbox: BwrapEnvironment) -> None:
    output = run(sandbox, "cat /etc/shadow; ls /var/run/docker.sock /run /root/.ssh; echo END")
    assert "root:" not in output and output.endswith("END\n")
    assert run(sandbox, "test -e /etc/passwd && echo system-files-readable") != ""


# -- what cannot be written ---------------------------------------------------------


def test_writes_reach_only_the_workdir_and_rw_mounts(site: Site, tmp_path: Path) -> None:
    ro, rw = tmp_path / "ro-data", tmp_path / "rw-data"
    ro.mkdir()
    rw.mkdir()
    (ro / "kept.txt").write_text("original\n")
    env = site.sandbox(mounts=(Mount(str(ro), "ro"), Mount(str(rw), "rw")))
    try:
        run(
            env,
            f"echo w > in-work.txt; echo w > {rw}/in-rw.txt; echo w > {ro}/kept.txt; "
            f"echo w > {site.outside}/escaped.txt; mkdir -p {site.outside}/dir; "
            f"echo w > {site.home}/in-home.txt; echo w > /usr/escaped; rm -f {ro}/kept.txt",
        )
        # Under /tmp a path lands in the session's private /tmp, never the host's.
        env.write_bytes(str(site.outside / "via-tool.txt"), b"x")
        with pytest.raises(PermissionError):
            env.write_bytes("/opt/herald-escape.txt", b"x")
        with pytest.raises(PermissionError):
            env.write_bytes(str(ro / "via-tool.txt"), b"x")
        env.write_bytes(str(rw / "via-tool.txt"), b"ok")
        assert "original" in run(env, f"cat {ro}/kept.txt")
    finally:
        env.close()
    assert (site.work / "in-work.txt").read_text() == "w\n"
    assert (rw / "in-rw.txt").read_text() == "w\n" and (rw / "via-tool.txt").read_bytes() == b"ok"
    assert (ro / "kept.txt").read_text() == "original\n"
    assert list(site.outside.iterdir()) == []
    assert not (site.home / "in-home.txt").exists() and not Path("/usr/escaped").exists()
    assert not Path("/opt/herald-escape.txt").exists()


def test_tmp_is_private_to_the_session_and_kept_across_commands(site: Site) -> None:
    first, second = site.sandbox(), site.sandbox()
    try:
        run(first, "echo one > /tmp/mine.txt")
        assert run(first, "cat /tmp/mine.txt") == "one\n"
        assert "No such file" in run(second, "cat /tmp/mine.txt")
        assert not Path("/tmp/mine.txt").exists()
    finally:
        first.close()
        second.close()


# -- network and processes ------------------------------------------------------------


@pytest.fixture
def loopback_service() -> Iterator[int]:
    """A TCP service on 127.0.0.1 that answers every connection with 'pong'."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(2)
    server.close()


PROBE = "exec 3<>/dev/tcp/127.0.0.1/{port} && head -c 4 <&3; echo; echo rc=$?"


def test_network_is_off_by_default(site: Site, loopback_service: int) -> None:
    env = site.sandbox()
    try:
        output = run(env, PROBE.format(port=loopback_service))
    finally:
        env.close()
    assert "pong" not in output and "Connection refused" in output


def test_network_true_reaches_the_host(site: Site, loopback_service: int) -> None:
    env = site.sandbox(network=True)
    try:
        output = run(env, PROBE.format(port=loopback_service))
    finally:
        env.close()
    assert "pong" in output


def test_host_processes_are_invisible(sandbox: BwrapEnvironment) -> None:
    host = subprocess.Popen(["sleep", "60"])
    try:
        names = run(sandbox, "ps -eo comm=")
        signal = run(sandbox, f"kill -0 {host.pid} 2>/dev/null; echo rc=$?")
    finally:
        host.kill()
        host.wait()
    assert "sleep" not in names and "python" not in names and "pytest" not in names
    assert set(names.split()) <= {"bwrap", "bash", "ps"}  # its pid 1, the shell, ps
    assert signal == "rc=1\n"


# -- limits ----------------------------------------------------------------------------

FORK_COUNTER = """
import os, time
n = 0
try:
    while n < 400:
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        n += 1
except OSError as exc:
    print("stopped", n, exc.errno)
"""


def test_the_process_limit_stops_forking(site: Site) -> None:
    env = site.sandbox(max_processes=24)
    try:
        env.write_bytes("forks.py", FORK_COUNTER.encode())
        output = run(env, "/usr/bin/python3 forks.py", timeout=60)
        assert output.startswith("stopped ")
        _, forked, errno = output.split()
        assert int(forked) < 24 and int(errno) == 11  # EAGAIN
        assert run(env, "echo alive") == "alive\n"  # the sandbox itself is fine
    finally:
        env.close()


def test_a_fork_bomb_is_contained_and_dies_with_its_command(site: Site) -> None:
    env = site.sandbox(max_processes=32)
    try:
        result = env.execute("bomb() { bomb | bomb & }; bomb; sleep 2", cwd=None, timeout=4)
        assert result.exit_code == 0 or result.timed_out
        cgroup = env._cgroup  # root: the limit is a pids cgroup; its peak shows it held
        if cgroup is not None:
            assert int((cgroup.path / "pids.peak").read_text()) <= 32
            assert int((cgroup.path / "pids.events").read_text().split()[1]) > 0  # forks refused
        assert env.sandbox_pids() == []  # every process of that command is gone
        assert run(env, "echo alive") == "alive\n"
    finally:
        env.close()


def test_the_total_memory_cap_holds_across_processes(site: Site) -> None:
    # Four processes of 40 MiB each stay under a 256 MiB per-process limit, but
    # not under a 96 MiB total: the memory cgroup stops them together.
    env = site.sandbox(memory_mb=256, total_memory_mb=96)
    try:
        hog = "/usr/bin/python3 -c 'import time; x = bytearray(40 << 20); time.sleep(3)'"
        out = run(env, f"for i in 1 2 3 4; do {hog} & done; wait; echo done", timeout=60)
        if not env.total_memory_by_cgroup:
            pytest.skip("no writable memory cgroup here (explain says so)")
        assert out.endswith("done\n") and ("Killed" in out or "MemoryError" in out), out
        assert run(env, "echo alive") == "alive\n"
    finally:
        env.close()


def test_memory_and_cpu_limits(site: Site) -> None:
    env = site.sandbox(memory_mb=256, cpu_seconds=1)
    try:
        memory = run(env, "/usr/bin/python3 -c 'x = bytearray(512 * 1024 * 1024)'; echo rc=$?")
        assert "MemoryError" in memory
        cpu = env.execute("while :; do :; done", cwd=None, timeout=30)
        assert cpu.exit_code in (
            128 + 24,
            128 + 9,
        )  # SIGXCPU at the soft limit, SIGKILL at the hard
    finally:
        env.close()


# -- lifetime ----------------------------------------------------------------------------


def test_closing_the_session_kills_everything_inside(site: Site) -> None:
    env = site.sandbox()
    env.spawn(
        "setsid nohup sleep 600 > /dev/null 2>&1 & echo $! > detached.pid; sleep 600", cwd=None
    )
    env.spawn("echo $$ > plain.pid; exec sleep 600", cwd=None)
    detached = host_pid(env, int(wait_for_file(site.work / "detached.pid")))
    plain = host_pid(env, int(wait_for_file(site.work / "plain.pid")))
    monitors = env.sandbox_pids()
    assert len(monitors) == 2
    env.close()
    assert all(wait_dead(pid) for pid in (detached, plain, *monitors))


def test_killing_herald_kills_the_sandbox(site: Site, tmp_path: Path) -> None:
    """--die-with-parent: a Herald killed with SIGKILL leaves nothing running."""
    script = tmp_path / "holder.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from pathlib import Path\n"
        "from environment_support import host_pid, wait_for_file\n"
        "from herald.environments import BwrapEnvironment, SandboxSpec\n"
        f"env = BwrapEnvironment(SandboxSpec({str(site.work)!r}, max_processes=64))\n"
        "env.spawn('echo $$ > holder.pid; exec sleep 600', cwd=None)\n"
        f"inner = int(wait_for_file(Path({str(site.work)!r}) / 'holder.pid'))\n"
        "print(host_pid(env, inner), *env.sandbox_pids(), flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdout is not None
    pids = [int(p) for p in holder.stdout.readline().split()]
    assert len(pids) == 2 and not any(wait_dead(pid, timeout=0.1) for pid in pids)
    leftovers = set(Path(tempfile.gettempdir()).glob(f"herald-sbx-{holder.pid}-*"))
    assert len(leftovers) == 1
    holder.kill()
    holder.wait()
    assert all(wait_dead(pid) for pid in pids)
    # The next sandbox to start removes what the killed Herald left behind.
    env = site.sandbox()
    try:
        env.execute("true", cwd=None, timeout=30)
    finally:
        env.close()
    assert not any(path.exists() for path in leftovers)


def test_the_child_environment_has_no_secrets_or_host_sockets(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock")
    monkeypatch.setenv("HERALD_TEST_API_KEY", "zq-process-secret-2")
    env = site.sandbox()
    try:
        output = run(env, "env")
    finally:
        env.close()
    assert "SSH_AUTH_SOCK" not in output and "zq-process-secret" not in output
    assert f"HOME={site.home}" in output and "TMPDIR=/tmp" in output


def test_os_environ_is_untouched(site: Site) -> None:
    before = dict(os.environ)
    env = site.sandbox()
    run(env, "true")
    env.close()
    assert dict(os.environ) == before


# -- refusing to start ---------------------------------------------------------------


def test_a_missing_bwrap_refuses_and_runs_nothing_on_the_host(site: Site) -> None:
    env = BwrapEnvironment(SandboxSpec(str(site.work)), bwrap=str(site.outside / "no-bwrap"))
    for _attempt in range(2):  # the same refusal every time, never a fallback
        with pytest.raises(SandboxUnavailableError, match="apt install bubblewrap") as refused:
            env.execute("touch ran-on-host", cwd=None, timeout=10)
        assert "outside the sandbox" in str(refused.value)
    with pytest.raises(SandboxUnavailableError):
        env.read_bytes("anything")
    with pytest.raises(SandboxUnavailableError):
        env.spawn("touch ran-on-host", cwd=None)
    env.close()
    assert not (site.work / "ran-on-host").exists()


def test_bwrap_missing_from_path_is_found_through_create_environment(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(site.outside))  # an empty directory: no bwrap on PATH
    config = HeraldConfig.model_validate({"terminal": {"backend": "bwrap"}})
    env = create_environment(config, secrets=None, cwd=str(site.work))
    with pytest.raises(SandboxUnavailableError, match="not installed or not on PATH"):
        env.execute("true", cwd=None, timeout=10)


def test_user_namespaces_disabled_explains_the_sysctl(site: Site) -> None:
    fake = site.outside / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because "
        "the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    env = BwrapEnvironment(SandboxSpec(str(site.work)), bwrap=str(fake))
    with pytest.raises(SandboxUnavailableError) as refused:
        env.execute("touch ran-on-host", cwd=None, timeout=10)
    message = str(refused.value)
    assert "kernel.unprivileged_userns_clone=1" in message and "max_user_namespaces" in message
    assert not (site.work / "ran-on-host").exists()
