"""`herald sandbox explain`, run as a user runs it (a subprocess in a project
directory, against a real home)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from herald.testing.homes import make_home


def _explain(
    home: Path, cwd: Path, *args: str, path: str | None = None, user_home: Path | None = None
):  # type: ignore[no-untyped-def]
    env = dict(os.environ, HERALD_HOME=str(home), COLUMNS="200")
    if user_home is not None:
        env["HOME"] = str(user_home)
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "herald", "sandbox", "explain", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_bwrap_is_explained_with_mounts_network_limits_and_policy(
    isolated_env: Path, project: Path, tmp_path: Path
) -> None:
    data = tmp_path / "datasets"
    data.mkdir()
    sandbox = {"mounts": [f"{data}:ro"], "memory_mb": 1024, "max_processes": 100}
    make_home(isolated_env, {"terminal": {"backend": "bwrap", "sandbox": sandbox}})
    done = _explain(isolated_env, project, "--no-check")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert f"working dir: {project} (read-write, except the read-only paths below)" in text
    assert f"{project}/.git/hooks" not in text  # no repository: nothing of git to protect
    assert f"{project}/.envrc (not there yet: kept from being created)" in text
    assert not (project / ".envrc").exists()  # explaining creates nothing
    assert f"mounts: {data} (read-only)" in text
    assert "network: off" in text and "1024 MiB" in text and "100 processes" in text
    assert "approvals: relaxed" in text and "hard-line commands are still refused" in text
    assert str(isolated_env) in text  # Herald's home is named among the hidden paths


def test_strict_and_network_on(isolated_env: Path, project: Path) -> None:
    config = {
        "terminal": {"backend": "bwrap", "sandbox": {"network": True}},
        "approvals": {"sandboxed": "strict"},
    }
    make_home(isolated_env, config)
    text = " ".join(_explain(isolated_env, project, "--no-check").stdout.split())
    assert "network: on" in text and "approvals: strict" in text


def test_a_sandbox_that_cannot_start_says_why(
    isolated_env: Path, project: Path, tmp_path: Path
) -> None:
    make_home(isolated_env, {"terminal": {"backend": "bwrap"}})
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _explain(isolated_env, project, path=str(empty))
    assert done.returncode == 1
    assert "cannot start" in done.stdout and "apt install bubblewrap" in done.stdout


def test_local_says_there_is_no_sandbox(isolated_env: Path, project: Path) -> None:
    make_home(isolated_env, {})
    done = _explain(isolated_env, project)
    assert done.returncode == 0 and "no sandbox" in done.stdout


def test_docker_names_its_image_and_container_wide_limits(
    isolated_env: Path, project: Path
) -> None:
    config = {"terminal": {"backend": "docker", "docker": {"image": "debian:bookworm-slim"}}}
    make_home(isolated_env, config)
    done = _explain(isolated_env, project, "--no-check")
    text = " ".join(done.stdout.split())
    assert done.returncode == 0, done.stderr
    assert "one container per session from debian:bookworm-slim" in text
    assert "MiB for the whole container" in text and "the container's pids limit" in text


@pytest.mark.parametrize("where", ["home", "parent"])
def test_the_home_or_a_directory_holding_it_is_refused_with_the_reason(
    isolated_env: Path, tmp_path: Path, where: str
) -> None:
    user_home = tmp_path / "users" / "me"
    user_home.mkdir(parents=True)
    make_home(isolated_env, {"terminal": {"backend": "bwrap"}})
    cwd = user_home if where == "home" else user_home.parent
    done = _explain(isolated_env, cwd, "--no-check", user_home=user_home)
    text = " ".join(done.stdout.split())
    assert done.returncode == 1, done.stdout
    assert "no sandbox here" in text and "refuses" in text
    assert "is your home directory" in text if where == "home" else "holds your home" in text
    assert "is not mounted" not in text  # never claims the home is hidden
