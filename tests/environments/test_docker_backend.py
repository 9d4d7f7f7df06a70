"""The docker backend. The container's shape and the refusals run everywhere
(no daemon needed: the refusal is the behaviour under test); the rest needs a
reachable Docker daemon and is skipped with the reason otherwise."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from environment_support import TEST_DOCKER_IMAGE, require_docker

from herald.config import ConfigError, HeraldConfig
from herald.environments import Mount, SandboxSpec, SandboxUnavailableError, create_environment
from herald.environments.docker import LABEL, OWNER_PID_LABEL, DockerEnvironment


def _env(work: Path, **spec: object) -> DockerEnvironment:
    return DockerEnvironment(
        SandboxSpec(str(work), **spec),  # type: ignore[arg-type]
        image=TEST_DOCKER_IMAGE,
        idle_timeout=0,
    )


# -- without a daemon ----------------------------------------------------------------


def test_the_container_is_shaped_by_the_sandbox_keys(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = _env(
        tmp_path,
        mounts=(Mount(str(data), "ro"),),
        memory_mb=512,
        cpu_seconds=30,
        max_processes=64,
    )
    args = env.run_args()
    joined = " ".join(args)
    assert "--network none" in joined and "--pids-limit 64" in joined
    assert "--memory 512m" in joined and "--ulimit cpu=30:30" in joined
    assert f"type=bind,source={tmp_path},target={tmp_path}" in joined
    assert f"type=bind,source={data},target={data},readonly" in joined
    assert "--cap-drop ALL" in joined and "no-new-privileges" in joined
    assert f"{LABEL}=1" in joined and f"{OWNER_PID_LABEL}=" in joined
    assert args[-2:] == [TEST_DOCKER_IMAGE, "infinity"]
    assert "/var/run/docker.sock" not in joined and str(Path.home()) not in joined.split()
    networked = _env(tmp_path, network=True).run_args()
    assert "none" not in networked[networked.index("--network") + 1]


def test_the_container_keeps_host_executed_files_read_only_and_secrets_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "autostart").mkdir()
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("")
    env = _env(work, mounts=(Mount(str(home / ".config"), "rw"),), total_memory_mb=300)
    joined = " ".join(env.run_args())
    git = work / ".git"
    assert f"type=bind,source={git},target={git} " in joined  # pinned: cannot be renamed
    for path in (git / "hooks", git / "config", work / ".envrc", work / ".vscode"):
        assert f"type=bind,source={path},target={path},readonly" in joined
    autostart = home / ".config" / "autostart"
    assert f"source={autostart},target={autostart},readonly" in joined
    assert f"type=tmpfs,target={home / '.config' / 'gh'}" in joined
    assert "--memory 300m" in joined
    assert not (work / ".envrc").exists()  # run_args creates nothing; the start does
    with pytest.raises(ConfigError, match="home directory"):
        _env(home)


def test_no_daemon_refuses_and_runs_nothing_on_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if subprocess.run(["which", "docker"], capture_output=True).returncode != 0:
        pytest.skip("the docker CLI is not installed")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    config = HeraldConfig.model_validate({"terminal": {"backend": "docker"}})
    env = create_environment(config, secrets=None, cwd=str(tmp_path))
    with pytest.raises(SandboxUnavailableError, match="no Docker daemon is reachable") as refused:
        env.execute("touch ran-on-host", cwd=None, timeout=10)
    assert "outside the sandbox" in str(refused.value)
    env.close()
    assert not (tmp_path / "ran-on-host").exists()


def test_a_missing_docker_cli_refuses(tmp_path: Path) -> None:
    env = DockerEnvironment(
        SandboxSpec(str(tmp_path)), image=TEST_DOCKER_IMAGE, docker="herald-no-such-docker"
    )
    with pytest.raises(SandboxUnavailableError, match="docker CLI is not installed"):
        env.read_bytes("x")


# -- with a daemon -------------------------------------------------------------------


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    require_docker()
    path = tmp_path / "work"
    path.mkdir()
    yield path


def _container_exists(name: str) -> bool:
    found = subprocess.run(["docker", "ps", "-aq", "--filter", f"name={name}"], capture_output=True)
    return bool(found.stdout.strip())


def test_one_container_per_session_reused_and_removed_at_close(work: Path) -> None:
    env = _env(work)
    first = env.execute("echo $$ > /tmp/marker; hostname", cwd=None, timeout=120)
    second = env.execute("cat /tmp/marker; hostname", cwd=None, timeout=60)
    assert first.output.splitlines()[-1] == second.output.splitlines()[-1]  # same container
    env.write_bytes("from-tool.txt", b"written")
    assert (work / "from-tool.txt").read_bytes() == b"written"
    name = env.container_name
    env.close()
    assert not _container_exists(name)


def test_the_host_stays_out_of_reach(work: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("zq-docker-secret\n")
    env = _env(work)
    try:
        output = env.execute(
            f"cat {secret}; ls /var/run/docker.sock; "
            "getent hosts example.com || echo no-network; echo > /tmp/x",
            cwd=None,
            timeout=120,
        ).output
    finally:
        env.close()
    assert "zq-docker-secret" not in output and "no-network" in output


def test_an_idle_container_is_removed_and_the_next_command_starts_another(work: Path) -> None:
    env = DockerEnvironment(SandboxSpec(str(work)), image=TEST_DOCKER_IMAGE, idle_timeout=1)
    try:
        env.execute("true", cwd=None, timeout=120)
        name = env.container
        assert name is not None
        deadline = time.monotonic() + 20
        while env.container is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert env.container is None
        assert env.execute("echo again", cwd=None, timeout=120).output == "again\n"
    finally:
        env.close()


def test_orphans_of_a_dead_herald_are_removed(work: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    name = f"herald-orphan-test-{dead.pid}"
    subprocess.run(
        ["docker", "run", "-d", "--name", name, "--label", f"{LABEL}=1",
         "--label", f"herald.owner_host={__import__('socket').gethostname()}",
         "--label", f"{OWNER_PID_LABEL}={dead.pid}", TEST_DOCKER_IMAGE, "sleep", "600"],
        check=True, capture_output=True,
    )  # fmt: skip
    env = _env(work)
    try:
        env.execute("true", cwd=None, timeout=120)  # the first start cleans up
        assert not _container_exists(name)
    finally:
        env.close()
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
