"""`herald sandbox explain` tells the truth: every path it lists as hidden is
absent inside the real bwrap sandbox, every read-only one refuses writes,
the writable ones take them, and the home it says is not mounted is not
(issue 27: explain claimed the home was hidden while the sandbox read
~/.npmrc and appended to ~/.bashrc)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from environment_support import require_bwrap

from herald.environments import create_environment, explain_terminal
from herald.testing.homes import make_home

TOKEN = "zq-npm-token-5521"
GH_TOKEN = "zq-gh-token-8812"


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    require_bwrap()
    home = tmp_path / "me"
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text(f"oauth_token: {GH_TOKEN}\n")
    (home / ".config" / "autostart").mkdir()
    (home / ".config" / "fish").mkdir()
    (home / ".config" / "fish" / "config.fish").write_text("# fish\n")
    (home / ".config" / "app").mkdir()
    (home / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={TOKEN}\n")
    (home / ".bashrc").write_text("# original\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def test_explain_lists_what_the_real_mounts_do(
    isolated_env: Path, user_home: Path, tmp_path: Path
) -> None:
    project = user_home / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    config = make_home(
        isolated_env,
        {
            "terminal": {
                "backend": "bwrap",
                "sandbox": {"mounts": [f"{user_home / '.config'}:rw"], "max_processes": 128},
            }
        },
    ).config
    explained = explain_terminal(config, str(project), check=True)
    text = " ".join(f"{label}: {value}" for label, value in explained.rows)
    assert explained.ok, text
    config_dir = user_home / ".config"
    assert str(config_dir / "gh") in explained.hidden
    for path in (
        config_dir / "autostart",
        config_dir / "fish",
        project / ".git" / "hooks",
        project / ".git" / "config",
        project / ".envrc",
        project / ".vscode",
    ):
        assert str(path) in explained.read_only, path
        assert str(path) in text
    assert not explained.home_visible and "is not mounted" in text
    assert "NOT enforced" in text or "MiB in total (a memory cgroup)" in text

    env = create_environment(config, secrets=None, cwd=str(project))
    try:

        def run(command: str) -> str:
            result = env.execute(command, cwd=None, timeout=60)
            return result.output

        assert TOKEN not in run("cat ~/.npmrc; cat $HOME/.npmrc")
        run("echo planted >> ~/.bashrc")
        assert (user_home / ".bashrc").read_text() == "# original\n"
        for path in explained.hidden:
            out = run(f"ls -A {path}; cat {path}/* 2>&1; echo END")
            assert GH_TOKEN not in out and out.strip().endswith("END")
            assert "hosts.yml" not in out
        for path in explained.read_only:
            target = f"{path}/planted" if os.path.isdir(path) else path
            out = run(f"echo planted >> {target} && echo WROTE; echo END")
            assert "WROTE" not in out, path
        assert not (config_dir / "autostart" / "planted").exists()
        assert (config_dir / "fish" / "config.fish").read_text() == "# fish\n"
        for path in explained.writable:
            if path.startswith(str(project)) or path == str(config_dir):
                assert "WROTE" in run(f"echo ok > {path}/app-file && echo WROTE")
        assert (project / "app-file").read_text() == "ok\n"
        assert (config_dir / "app-file").read_text() == "ok\n"
    finally:
        env.close()
    assert not (project / ".envrc").exists() and not (project / ".vscode").exists()
