"""The relaxed policy against the audit's destructive commands (issue 27): in a
real git repository, what runs unasked with no checkpoint store, with one that
covers the paths and with one that does not. Git history damage asks in every
case; the checkpoint port is played by plain functions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from herald.safety import SandboxScope, decide

ASK, ALLOW = "ask_human", "allow"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "project"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("print(1)\n")
    (work / "build").mkdir()
    (work / "build" / "out.o").write_text("x")
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    return work


class Checkpoints:
    """A stand-in checkpoint store: answers `covers` and records what it was asked."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[tuple[str, ...]] = []

    def __call__(self, paths: tuple[str, ...]) -> bool:
        self.asked.append(paths)
        return self.answer


def _decide(command: str, work: Path, checkpointed: Checkpoints | None):  # type: ignore[no-untyped-def]
    scope = SandboxScope("bwrap", str(work), checkpointed=checkpointed)
    return decide(command, env={"HOME": "/nonexistent-home", "PWD": str(work)}, sandbox=scope)


# command: (no checkpoint store, checkpoint covers, checkpoint does not cover)
TABLE = {
    "git clean -fdx": (ASK, ASK, ASK),
    "git reset --hard": (ASK, ASK, ASK),
    "find . -name '*.py' -delete": (ASK, ALLOW, ASK),
    "python -c \"import shutil; shutil.rmtree('src')\"": (ASK, ASK, ASK),
    "rm -rf .git": (ASK, ASK, ASK),
    "rm -rf build": (ASK, ALLOW, ASK),
    "rm -rf /tmp/x": (ALLOW, ALLOW, ALLOW),
}


@pytest.mark.parametrize("command", list(TABLE))
def test_the_audit_commands(command: str, repo: Path) -> None:
    none, covered, uncovered = TABLE[command]
    assert _decide(command, repo, None).outcome == none
    assert _decide(command, repo, Checkpoints(True)).outcome == covered
    assert _decide(command, repo, Checkpoints(False)).outcome == uncovered


def test_the_store_is_asked_about_the_real_paths(repo: Path) -> None:
    store = Checkpoints(True)
    decision = _decide("rm -rf build src/app.py", repo, store)
    assert decision.outcome == ALLOW and "checkpoint" in decision.reason
    assert store.asked == [(str(repo / "build"), str(repo / "src" / "app.py"))]
    private = Checkpoints(True)
    assert _decide("rm -rf /tmp/x", repo, private).outcome == ALLOW
    assert private.asked == []  # sandbox-private damage needs no checkpoint


def test_inline_code_is_relaxed_only_without_history_and_with_a_checkpoint(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "plain"
    (plain / "src").mkdir(parents=True)
    code = "python -c \"import shutil; shutil.rmtree('src')\""
    assert _decide(code, plain, None).outcome == ASK
    store = Checkpoints(True)
    assert _decide(code, plain, store).outcome == ALLOW
    assert store.asked == [(str(plain),)]  # it can reach the whole working directory


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf .git/objects",
        "rm -rf ./.g*",
        "rm -rf .",
        "find . -delete",
        "find . -name '*' -delete",
        "find . -name '*.py' -o -name HEAD -delete",
        "find .git -name '*.sample' -delete",
        "find . -iname head -delete",
        "ln -s .git gone && rm -rf gone/",
        "rm -rf vendor",  # holds a nested repository
        "rm -rf ..",
        "git branch -D wip",
        "git stash drop",
        "git reflog expire --expire=now --all",
        "git gc --prune=now",
        "rm -rf .vscode",
        "rm -rf .git/hooks",
        "find . -name .envrc -delete",
        "find . -name 'tasks.json' -delete",
        "chmod -R 777 .",
        "shopt -s dotglob; rm -rf *",
    ],
)
def test_history_host_executed_files_and_the_whole_tree_ask_even_checkpointed(
    command: str, repo: Path
) -> None:
    (repo / "vendor" / "lib" / ".git").mkdir(parents=True)
    (repo / ".vscode").mkdir()
    (repo / ".vscode" / "tasks.json").write_text("{}")
    (repo / ".envrc").write_text("")
    (repo / "x.py").write_text("")
    assert _decide(command, repo, Checkpoints(True)).outcome == ASK, command


def test_moving_the_project_into_private_tmp_first_is_project_damage(repo: Path) -> None:
    assert _decide("mv build /tmp/x && rm -rf /tmp/x", repo, None).outcome == ASK
    assert _decide("cp -al src /tmp/y; rm -rf /tmp/y", repo, None).outcome == ASK
    assert _decide("rm -rf /tmp/x && echo removed build", repo, None).outcome == ALLOW


def test_redirects_are_not_paths_but_digits_in_names_are(repo: Path) -> None:
    assert _decide("rm -rf /tmp/x 2>&1 >/tmp/log", repo, None).outcome == ALLOW
    assert _decide("rm -rf 9/tmp/x", repo, None).outcome == ASK  # the project's 9/tmp/x
    assert _decide("rm -rf /tmp/x 2>build.log", repo, None).outcome == ASK


def test_a_symlink_from_private_tmp_into_the_history_is_followed(
    repo: Path, tmp_path: Path
) -> None:
    link = tmp_path / "private" / "g"
    link.parent.mkdir()
    link.symlink_to(repo / ".git")
    scope = SandboxScope(
        "bwrap",
        str(repo),
        private_dirs=(str(tmp_path / "private"),),
        checkpointed=Checkpoints(True),
    )
    decision = decide(f"rm -rf {link}/", env={"PWD": str(repo)}, sandbox=scope)
    assert decision.outcome == ASK


def test_a_workdir_under_the_private_tmp_is_still_the_project(tmp_path: Path) -> None:
    work = tmp_path / "work"  # pytest's tmp lives under /tmp, the sandbox's private dir
    (work / "build").mkdir(parents=True)
    assert str(work).startswith("/tmp/")
    assert _decide("rm -rf build", work, None).outcome == ASK
    assert _decide(f"rm -rf {tmp_path}", work, Checkpoints(True)).outcome == ASK
