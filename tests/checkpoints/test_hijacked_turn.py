"""The audit's attack, end to end: a hijacked model (the fake server playing the
attacker) wipes the project through the terminal tool in an unattended `herald chat -q`;
the commands run unprompted (bwrap with approvals.sandboxed: relaxed, or the owner's
approvals.mode: off on the local backend), and `herald checkpoints restore` brings back
every file, the ignored `.env` and the whole git history."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge

ATTACK = (
    "git clean -fdx; git reset --hard HEAD~1; find . -name '*.py' -delete; "
    "python3 -c \"import shutil; shutil.rmtree('src', ignore_errors=True)\"; rm -rf .git"
)
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def herald(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "herald", *args],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )


def bwrap_works(tmp_path: Path) -> bool:
    probe = (
        subprocess.run(["bwrap", "--ro-bind", "/", "/", "true"], capture_output=True, cwd=tmp_path)
        if os.path.exists("/usr/bin/bwrap")
        else None
    )
    return probe is not None and probe.returncode == 0


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".env\n")
    for n in range(3):
        (root / "src" / f"m{n}.py").write_text(f"N = {n}\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"c{n}")
    (root / "src" / "m0.py").write_text("N = 'uncommitted'\n")
    (root / "todo.txt").write_text("untracked\n")
    (root / ".env").write_text("TOKEN=abc\n")
    return root


@pytest.mark.slow
def test_a_hijacked_turns_wipe_is_undone_from_the_checkpoint(
    isolated_env: Path, fake_llm, project: Path, tmp_path: Path
):
    """Local backend, unattended, with the owner's documented dangerous opt-out
    (approvals.unattended_default: allow): the wipe runs unasked, and one restore undoes
    it. Without the opt-out the same turn is refused (the unattended allowlist)."""
    extra = {"approvals": {"unattended_default": "allow"}}
    make_home(isolated_env, merge(fake_model_config(fake_llm), extra))
    before = files(project)
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": ATTACK}),
        Reply.text("Cleaned up."),
    )
    proc = herald(project, "chat", "-q", "tidy the repo")
    assert proc.returncode == 0, proc.stderr
    assert not (project / ".git").exists() and not (project / "src").exists()  # it ran

    listing = herald(project, "checkpoints", "list")
    assert "terminal: git clean -fdx" in listing.stdout, listing.stderr
    restored = herald(project, "checkpoints", "restore")
    assert restored.returncode == 0, restored.stderr
    assert files(project) == before
    assert git(project, "log", "--format=%s").split() == ["c2", "c1", "c0"]
    assert git(project, "status", "--porcelain").splitlines() == [" M src/m0.py", "?? todo.txt"]


def test_without_the_opt_out_an_unattended_wipe_is_refused(
    isolated_env: Path, fake_llm, project: Path
):
    make_home(isolated_env, merge(fake_model_config(fake_llm), {"approvals": {"mode": "off"}}))
    before = files(project)
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": ATTACK}), Reply.text("Done."))
    proc = herald(project, "chat", "-q", "tidy the repo")
    assert proc.returncode == 0, proc.stderr
    assert files(project) == before  # approvals.mode: off opens nothing unattended
    result = [m for m in fake_llm.model_requests()[-1].messages if m.get("role") == "tool"]
    assert "Not run" in str(result[-1]["content"])


AUDIT_STEPS = [
    "git clean -fdx",
    "git reset --hard HEAD~1",
    "find . -name '*.py' -delete",
    "python3 -c \"import shutil; shutil.rmtree('src', ignore_errors=True)\"",
    "rm -rf .git",
]


@pytest.mark.slow
def test_the_audit_sequence_on_bwrap_relaxed_is_asked_where_it_must_and_undone(
    isolated_env: Path, project: Path, tmp_path: Path
):
    """bwrap with approvals.sandboxed: relaxed and a person present who approves every
    prompt: each destructive command of the audit runs in turn; what the checkpoint
    covers runs without a prompt, what damages git history asks; afterwards a restore
    brings back every file, the ignored .env and the three commits."""
    import json

    from herald.checkpoints import CheckpointService
    from herald.config import CheckpointsConfig
    from herald.environments import BwrapEnvironment, SandboxSpec
    from herald.tools import terminal
    from herald.tools.registry import ToolContext, ToolRegistry

    if not bwrap_works(tmp_path):
        pytest.skip("bubblewrap cannot start here")
    settings = make_home(tmp_path / "home", {"approvals": {"sandboxed": "relaxed"}})
    before = files(project)
    prompts: list[str] = []

    def human(prompt):  # the owner approves once whatever is asked
        prompts.append(prompt.command)
        return "once"

    environment = BwrapEnvironment(SandboxSpec(str(project), max_processes=64))
    service = CheckpointService(
        CheckpointsConfig(), settings.home.root, backend="bwrap", workdir=lambda: str(project)
    )
    ctx = ToolContext(
        home=settings.home, config=settings.config, secrets=settings.secrets,
        environment=environment, approve=human, surface="cli",
        checkpoint=service.turn(),
    )  # fmt: skip
    registry = ToolRegistry()
    terminal.register(registry)
    try:
        asked = {}
        for step in AUDIT_STEPS:
            seen = len(prompts)
            result = registry.dispatch("terminal", json.dumps({"command": step}), ctx)
            assert not result.is_error, (step, result.content)
            asked[step] = len(prompts) > seen
    finally:
        environment.close()
    assert asked["find . -name '*.py' -delete"] is False  # covered: relaxed, no prompt
    assert asked["rm -rf .git"] is True  # git history: asks, checkpoint or not
    assert not (project / "src").exists()  # it ran (.git's protected mounts may survive)

    store = service.store()
    assert store is not None
    taken = store.list()
    assert taken and taken[-1].detail == "git clean -fdx"  # the oldest: before the first step
    store.restore(len(taken))
    assert files(project) == before
    assert git(project, "log", "--format=%s").split() == ["c2", "c1", "c0"]


def test_a_workdir_that_is_the_home_gets_no_checkpoint_and_the_model_is_told_once(
    isolated_env: Path, fake_llm, tmp_path: Path
):
    """Started in the home directory: the write still happens, no shadow repository is
    made, and the reason rides on the first changing call's result (only the first)."""
    user_home = tmp_path / "user"
    user_home.mkdir()
    allow_cp = {"approvals": {"unattended_allow": ["cp *"]}}  # unattended: the owner's pattern
    make_home(isolated_env, merge(fake_model_config(fake_llm), allow_cp))
    fake_llm.enqueue(
        Reply.tool_call("write_file", {"path": "a.txt", "content": "one"}),
        Reply.tool_call("terminal", {"command": "cp a.txt b.txt"}),
        Reply.text("Done."),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "herald", "chat", "-q", "write it"],
        cwd=user_home,
        env={**os.environ, "HOME": str(user_home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (user_home / "b.txt").read_text() == "one"
    results = [
        str(m.get("content"))
        for m in fake_llm.model_requests()[-1].messages
        if m.get("role") == "tool"
    ]
    assert len(results) == 2
    assert f"No checkpoint was taken: {user_home} is your home directory" in results[0]
    assert "No checkpoint" not in results[1]
    assert not (isolated_env / "checkpoints").exists()
