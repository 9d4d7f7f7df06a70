"""The shadow repository against real git and real destructive commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from herald.checkpoints import CheckpointError, CheckpointStore, Limits, covers

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def sh(cwd: Path, *argv: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return proc.stdout


def tree_bytes(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Three commits, an uncommitted edit, an untracked file, an ignored .env."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    sh(root, "git", "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".env\n__pycache__/\n")
    for n in range(3):
        (root / "src" / f"mod{n}.py").write_text(f"VALUE = {n}\n")
        sh(root, "git", "add", "-A")
        sh(root, "git", "commit", "-q", "-m", f"commit {n}")
    (root / "src" / "mod0.py").write_text("VALUE = 'edited, not committed'\n")
    (root / "notes.txt").write_text("untracked\n")
    (root / ".env").write_text("API_KEY=secret\n")
    (root / "bin.dat").write_bytes(bytes(range(256)) * 4)
    return root


@pytest.fixture
def store(tmp_path: Path, project: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "home" / "checkpoints", project, Limits.from_mb(10, 500))


def test_restore_undoes_every_destructive_command(project: Path, store: CheckpointStore):
    before = tree_bytes(project)
    taken = store.snapshot(tool="terminal", detail="git clean -fdx")
    assert taken.created and taken.checkpoint.has_git_dir
    sh(project, "git", "clean", "-fdx")
    sh(project, "git", "reset", "--hard", "HEAD~1")
    sh(project, "find", ".", "-name", "*.py", "-delete")
    sh(project, sys.executable, "-c", "import shutil; shutil.rmtree('src')")
    sh(project, "rm", "-rf", ".git")
    assert not (project / ".env").exists() and not (project / ".git").exists()

    result = store.restore(1)

    assert tree_bytes(project) == before
    log = sh(project, "git", "log", "--format=%s")
    assert log.split() == ["commit", "2", "commit", "1", "commit", "0"]
    assert "edited, not committed" in sh(project, "git", "diff")
    assert result.target.commit == taken.checkpoint.commit


def test_the_shadow_repository_lives_under_the_home_and_not_in_the_project(
    tmp_path: Path, project: Path, store: CheckpointStore
):
    git_before = tree_bytes(project / ".git")
    store.snapshot(tool="write_file")
    assert store.dir.parent == tmp_path / "home" / "checkpoints"
    assert tree_bytes(project / ".git") == git_before  # the project's repo is untouched
    assert sh(project, "git", "status", "--porcelain").count("\n") == 3
    assert oct(store.dir.stat().st_mode & 0o777) == "0o700"


def test_an_unchanged_tree_makes_no_new_checkpoint(project: Path, store: CheckpointStore):
    first = store.snapshot(tool="patch")
    second = store.snapshot(tool="patch")
    assert first.created and not second.created
    assert second.checkpoint.commit == first.checkpoint.commit
    assert len(store.list()) == 1
    (project / "notes.txt").write_text("changed\n")
    assert store.snapshot(tool="patch").created
    assert len(store.list()) == 2


def test_the_project_gitattributes_and_hooks_change_nothing(project: Path, store: CheckpointStore):
    """A project's `* text eol=crlf` must not rewrite bytes, and its hooks never run."""
    (project / ".gitattributes").write_text("* text eol=crlf\n*.py filter=evil\n")
    (project / "crlf.txt").write_bytes(b"one\r\ntwo\n")
    hook = project / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {project}/HOOK_RAN\n")
    hook.chmod(0o755)
    before = tree_bytes(project)
    store.snapshot(tool="t")
    (project / "crlf.txt").unlink()
    store.restore(1)
    assert tree_bytes(project) == before
    assert not (project / "HOOK_RAN").exists()


def test_size_limits_list_what_they_left_out(tmp_path: Path, project: Path):
    (project / "big.bin").write_bytes(b"x" * 300_000)
    (project / "medium.bin").write_bytes(b"y" * 150_000)
    small = CheckpointStore(
        tmp_path / "cp", project, Limits(max_file_bytes=200_000, max_total_bytes=10**9)
    )
    checkpoint = small.snapshot(tool="t").checkpoint
    assert set(checkpoint.left_out) == {"big.bin"}
    assert "max_file_mb" in checkpoint.left_out["big.bin"]
    assert "big.bin" not in small.files(checkpoint)
    assert "medium.bin" in small.files(checkpoint)

    total = sum(len(b) for b in tree_bytes(project).values()) - 300_000
    tight = CheckpointStore(
        tmp_path / "cp2", project, Limits(max_file_bytes=10**9, max_total_bytes=total - 1000)
    )
    left = tight.snapshot(tool="t").checkpoint.left_out
    assert "big.bin" in left and "max_total_mb" in left["big.bin"]
    assert covers(small, ["src", "notes.txt"])
    assert not covers(small, ["big.bin"])
    assert not covers(small, ["."])  # `rm -rf .` would lose big.bin
    assert not covers(small, ["../elsewhere"])


def test_a_nested_repository_is_listed_and_not_covered(project: Path, store: CheckpointStore):
    vendor = project / "vendor" / "lib"
    vendor.mkdir(parents=True)
    sh(vendor, "git", "init", "-q")
    (vendor / "x.py").write_text("x\n")
    checkpoint = store.snapshot(tool="t").checkpoint
    assert checkpoint.left_out == {"vendor/lib": "a nested git repository"}
    assert not covers(store, ["vendor"])
    assert covers(store, ["src/mod1.py", str(project / "notes.txt")])


def test_covers_is_false_without_a_checkpoint(store: CheckpointStore):
    assert not covers(store, ["src"])


def test_restore_one_path_leaves_the_rest(project: Path, store: CheckpointStore):
    store.snapshot(tool="t")
    (project / "src" / "mod1.py").write_text("changed\n")
    (project / "notes.txt").write_text("also changed\n")
    result = store.restore(1, path="src")
    assert (project / "src" / "mod1.py").read_text() == "VALUE = 1\n"
    assert (project / "notes.txt").read_text() == "also changed\n"
    assert result.restored == 3
    with pytest.raises(CheckpointError, match="not in checkpoint"):
        store.restore(2, path="no/such/file")


def test_clean_removes_files_created_since_and_only_with_clean(
    project: Path, store: CheckpointStore
):
    store.snapshot(tool="t")
    (project / "new_dir").mkdir()
    (project / "new_dir" / "made.py").write_text("new\n")
    (project / "src" / "mod2.py").unlink()
    kept = store.restore(1)
    assert (project / "new_dir" / "made.py").exists() and kept.removed == ()
    assert (project / "src" / "mod2.py").exists()
    cleaned = store.restore(2, clean=True)  # 1 is now the undo checkpoint of that restore
    assert cleaned.removed == ("new_dir/made.py",)
    assert not (project / "new_dir").exists()


def test_a_restore_can_itself_be_undone(project: Path, store: CheckpointStore):
    store.snapshot(tool="t")
    (project / "notes.txt").write_text("the turn's work\n")
    (project / "src" / "mod1.py").unlink()
    after_turn = tree_bytes(project)
    first = store.restore(1)
    assert (project / "notes.txt").read_text() == "untracked\n"
    assert first.undo.tool == "restore"
    store.restore(1)  # the newest is the state before the first restore
    assert tree_bytes(project) == after_turn


def test_diff_shows_what_changed_since(project: Path, store: CheckpointStore):
    store.snapshot(tool="t")
    (project / "notes.txt").write_text("rewritten\n")
    text = store.diff(1)
    assert "-untracked" in text and "+rewritten" in text
    assert store.diff(1, path="src") == ""


def test_prune_keeps_the_newest_and_the_young(project: Path, store: CheckpointStore):
    for n in range(4):
        (project / "notes.txt").write_text(f"v{n}\n")
        store.snapshot(tool="t")
    assert store.prune(keep_last=10, keep_days=0) == 0
    assert store.prune(keep_last=1, keep_days=1) == 0  # all younger than a day
    assert store.prune(keep_last=2, keep_days=0, now=10**10) == 2
    remaining = store.list()
    assert [c.number for c in remaining] == [1, 2]
    store.restore(2)
    assert (project / "notes.txt").read_text() == "v2\n"


def test_restoring_a_missing_checkpoint_says_what_exists(store: CheckpointStore):
    with pytest.raises(CheckpointError, match="no checkpoints"):
        store.restore(1)
    store.snapshot(tool="t")
    with pytest.raises(CheckpointError, match="1 to 1"):
        store.restore(5)


def test_a_restore_never_writes_through_a_symlink_the_model_planted(
    tmp_path: Path, project: Path, store: CheckpointStore
):
    """`rm -rf .git && ln -s ~/.ssh .git` (or the same with `src`) must not make
    /rollback write the checkpoint's files into the symlink's target."""
    outside = tmp_path / "ssh"
    outside.mkdir()
    (outside / "config").write_text("Host *\n")
    store.snapshot(tool="t")
    sh(project, "rm", "-rf", ".git", "src")
    (project / ".git").symlink_to(outside)
    (project / "src").symlink_to(outside)
    store.restore(1)
    assert (outside / "config").read_text() == "Host *\n"
    assert sorted(p.name for p in outside.iterdir()) == ["config"]
    assert (project / ".git").is_dir() and not (project / ".git").is_symlink()
    assert sh(project, "git", "log", "--format=%s").split()[-2:] == ["commit", "0"]
    assert (project / "src" / "mod1.py").read_text() == "VALUE = 1\n"


def test_concurrent_snapshots_of_one_workdir_all_succeed(tmp_path: Path, project: Path):
    """Sub-agents (threads) and other Herald processes (own stores) share the shadow
    repository; git's index.lock must never fail one of them."""
    from concurrent.futures import ThreadPoolExecutor

    def take(n: int) -> bool:
        (project / f"out{n}.txt").write_text(str(n))
        own = CheckpointStore(tmp_path / "home" / "checkpoints", project, Limits.from_mb(10, 500))
        return own.snapshot(tool="t", detail=str(n)).checkpoint is not None

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(take, range(8)))


def test_the_quick_path_stores_what_a_full_walk_would(tmp_path: Path, project: Path):
    """After the first snapshot only what git's stat walk reports is sized and added;
    the result must be the tree a fresh full walk makes, limits included."""
    limits = Limits(max_file_bytes=100_000, max_total_bytes=10**9)
    quick = CheckpointStore(tmp_path / "quick", project, limits)
    quick.snapshot(tool="t")
    (project / "src" / "mod1.py").write_text("changed\n")
    (project / "notes.txt").unlink()
    (project / "grown.bin").write_bytes(b"z" * 200_000)  # over max_file_mb now
    (project / "new" / "deep").mkdir(parents=True)
    (project / "new" / "deep" / "f.txt").write_text("new\n")
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    sh(nested, "git", "init", "-q")
    sh(project, "git", "commit", "-q", "--allow-empty", "-m", "commit 3")
    taken = quick.snapshot(tool="t").checkpoint
    full = CheckpointStore(tmp_path / "full", project, limits).snapshot(tool="t").checkpoint
    assert (taken.files_tree, taken.git_tree) == (full.files_tree, full.git_tree)
    assert (
        taken.left_out
        == full.left_out
        == {
            "grown.bin": "0.2 MB, over checkpoints.max_file_mb",
            "vendor/lib": "a nested git repository",
        }
    )
    assert "notes.txt" not in quick.files(taken)
    assert "new/deep/f.txt" in quick.files(taken)


def test_the_quick_path_walks_everything_again_near_the_total_limit(tmp_path: Path, project: Path):
    total = sum(len(b) for b in tree_bytes(project).values())
    store = CheckpointStore(tmp_path / "cp", project, Limits(10**9, total + 50_000))
    assert store.snapshot(tool="t").checkpoint.left_out == {}
    (project / "a.bin").write_bytes(b"a" * 40_000)
    assert store.snapshot(tool="t").checkpoint.left_out == {}
    (project / "b.bin").write_bytes(b"b" * 30_000)  # now over: the largest goes
    left = store.snapshot(tool="t").checkpoint.left_out
    assert list(left) == ["a.bin"] and "max_total_mb" in left["a.bin"]


def test_changed_files_are_named_as_the_workdir_knows_them(project: Path, store: CheckpointStore):
    store.snapshot(tool="patch")
    (project / "notes.txt").write_text("changed\n")
    sh(project, "git", "commit", "-q", "--allow-empty", "-m", "another")
    store.snapshot(tool="patch")
    newest, before = store.list()[:2]
    changed = store.changed_files(newest, before)
    assert "notes.txt" in changed
    assert any(p.startswith(".git/") for p in changed)  # the history moved too
    assert not any(p.startswith(("files/", "git/")) for p in changed)
