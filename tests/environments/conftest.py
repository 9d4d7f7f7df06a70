"""Fixtures for the environment tests: a real sshd on 127.0.0.1 (session-wide)
and one `backend` fixture that runs each parity test against local and ssh."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from herald.config import Secrets
from herald.environments import Environment, LocalEnvironment, SandboxSpec

sys.path.insert(0, str(Path(__file__).parent))  # environment_support, also under importlib mode
from environment_support import (
    FAKE_SECRET_NAME,
    FAKE_SECRET_VALUE,
    TEST_DOCKER_IMAGE,
    SshdServer,
    find_sshd,
    require_bwrap,
    require_docker,
    ssh_environment,
    start_sshd,
)

ACTIVITY_INTERVAL = 0.2


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshdServer]:
    binary = find_sshd()
    if binary is None:
        pytest.skip("sshd is not installed (apt-get install -y openssh-server)")
    for tool in ("ssh", "ssh-keygen", "setsid"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    server = start_sshd(tmp_path_factory.mktemp("sshd"), binary)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def ssh_control_dir(sshd: SshdServer) -> Iterator[str]:
    """One multiplexed connection shared by every test's SshEnvironment (a short
    path: unix socket paths are limited to ~104 bytes)."""
    directory = tempfile.mkdtemp(prefix="hsht-", dir="/tmp")
    yield directory
    probe = ssh_environment(sshd, directory, cwd="/")
    subprocess.run(probe.ssh_argv("-O", "exit"), capture_output=True, timeout=5)
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def fake_secrets(tmp_path: Path) -> Secrets:
    env_file = tmp_path / "secrets.env"
    env_file.write_text(f"{FAKE_SECRET_NAME}={FAKE_SECRET_VALUE}\n")
    return Secrets(env_file, environ={})


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture(params=["local", "ssh", "bwrap", "docker"])
def backend(
    request: pytest.FixtureRequest, workdir: Path, fake_secrets: Secrets
) -> Iterator[Environment]:
    """The same test against every backend, each rooted at a fresh tmp directory."""
    env: Environment
    if request.param == "bwrap":
        require_bwrap()
        from herald.environments import BwrapEnvironment

        env = BwrapEnvironment(
            SandboxSpec(str(workdir), max_processes=256),
            secrets=fake_secrets,
            activity_interval=ACTIVITY_INTERVAL,
        )
    elif request.param == "docker":
        require_docker()
        from herald.environments.docker import DockerEnvironment

        env = DockerEnvironment(
            SandboxSpec(str(workdir), max_processes=256),
            image=TEST_DOCKER_IMAGE,
            idle_timeout=0,
            activity_interval=ACTIVITY_INTERVAL,
        )
    elif request.param == "local":
        env = LocalEnvironment(
            str(workdir), secrets=fake_secrets, activity_interval=ACTIVITY_INTERVAL
        )
    else:
        server = request.getfixturevalue("sshd")
        control_dir = request.getfixturevalue("ssh_control_dir")
        env = ssh_environment(
            server, control_dir, cwd=str(workdir), activity_interval=ACTIVITY_INTERVAL
        )
    yield env
    env.close()
