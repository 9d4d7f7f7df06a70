"""`herald checkpoints list|diff|restore|prune` as a real subprocess on a tmp home."""

from __future__ import annotations

from pathlib import Path

import pytest

from herald.checkpoints import store_for
from herald.config import CheckpointsConfig


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('v1')\n")
    (root / "README.md").write_text("hello\n")
    return root


@pytest.fixture
def store(isolated_env: Path, project: Path):
    return store_for(isolated_env, project, CheckpointsConfig())


def test_list_diff_and_restore_a_whole_tree_then_undo_it(run_cli, project: Path, store):
    assert "No checkpoints of" in run_cli("checkpoints", "list", "-C", str(project)).stdout
    store.snapshot(tool="write_file", turn="3")
    (project / "src" / "app.py").write_text("print('v2')\n")
    (project / "README.md").unlink()
    (project / "new.txt").write_text("made by the turn\n")

    listing = run_cli("checkpoints", "list", "-C", str(project))
    assert listing.returncode == 0, listing.stderr
    assert "  1  " in listing.stdout and "turn 3  write_file" in listing.stdout
    assert "2 files" in listing.stdout and "src/app.py" in listing.stdout

    diff = run_cli("checkpoints", "diff", "1", "-C", str(project))
    assert "-print('v1')" in diff.stdout and "+print('v2')" in diff.stdout
    assert "README.md" in diff.stdout

    restored = run_cli("checkpoints", "restore", "-C", str(project))
    assert restored.returncode == 0, restored.stderr
    assert "Restored the workdir to checkpoint 1" in restored.stdout
    assert (project / "src" / "app.py").read_text() == "print('v1')\n"
    assert (project / "README.md").read_text() == "hello\n"
    assert (project / "new.txt").exists()  # only --clean removes what was created since

    undone = run_cli("checkpoints", "restore", "1", "-C", str(project))
    assert undone.returncode == 0, undone.stderr
    assert (project / "src" / "app.py").read_text() == "print('v2')\n"
    assert not (project / "README.md").exists()


def test_restore_one_path_and_clean(run_cli, project: Path, store):
    store.snapshot(tool="patch")
    (project / "src" / "app.py").write_text("changed\n")
    (project / "README.md").write_text("changed too\n")
    (project / "src" / "extra.py").write_text("new\n")
    proc = run_cli("checkpoints", "restore", "--path", "src", "--clean", "-C", str(project))
    assert proc.returncode == 0, proc.stderr
    assert "Restored src from checkpoint 1" in proc.stdout
    assert "src/extra.py" in proc.stdout
    assert (project / "src" / "app.py").read_text() == "print('v1')\n"
    assert not (project / "src" / "extra.py").exists()
    assert (project / "README.md").read_text() == "changed too\n"


def test_a_missing_checkpoint_and_a_refused_workdir_fail_with_the_reason(
    run_cli, project: Path, store, tmp_path: Path
):
    store.snapshot(tool="patch")
    proc = run_cli("checkpoints", "restore", "7", "-C", str(project))
    assert proc.returncode == 2 and "no checkpoint 7" in proc.stderr
    proc = run_cli("checkpoints", "list", "-C", "/")
    assert proc.returncode == 2 and "filesystem root" in proc.stderr


def test_prune_keeps_the_newest_per_workdir(run_cli, project: Path, store):
    for n in range(3):
        (project / "README.md").write_text(f"v{n}\n")
        store.snapshot(tool="t")
    proc = run_cli("checkpoints", "prune", "--keep-last", "1", "--keep-days", "0")
    assert proc.returncode == 0, proc.stderr
    assert "dropped 2 checkpoint(s)" in proc.stdout and "Pruned 2" in proc.stdout
    assert len(store.list()) == 1
    assert "Pruned 0" in run_cli("checkpoints", "prune").stdout  # the defaults keep a week
