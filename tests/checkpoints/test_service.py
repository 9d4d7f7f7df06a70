"""The per-session checkpoint step: when it snapshots, and which workdirs it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from herald.checkpoints import CheckpointService, store_for, workdir_refusal
from herald.config import CheckpointsConfig


def service(
    herald_root: Path, workdir: Path, backend: str = "local", **config
) -> CheckpointService:
    return CheckpointService(
        CheckpointsConfig(**config), herald_root, backend=backend, workdir=lambda: str(workdir)
    )


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    (home / "code" / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_home_root_and_ancestors_of_home_get_no_checkpoint(tmp_path: Path, user_home: Path):
    herald = user_home / ".herald"
    assert "your home directory" in (workdir_refusal(user_home, herald) or "")
    assert "filesystem root" in (workdir_refusal("/", herald) or "")
    assert "contains your home" in (workdir_refusal(user_home.parent, herald) or "")
    assert "not a directory" in (workdir_refusal(user_home / "nope", herald) or "")
    (user_home / "code" / "h").mkdir()
    assert "Herald's home" in (workdir_refusal(user_home / "code", user_home / "code" / "h") or "")
    assert workdir_refusal(user_home / "code" / "proj", herald) is None


@pytest.mark.parametrize("where", ["home", "root", "ancestor"])
def test_a_refused_workdir_is_said_once_and_never_fails_the_call(
    tmp_path: Path, user_home: Path, where: str
):
    workdir = {"home": user_home, "root": Path("/"), "ancestor": user_home.parent}[where]
    herald = tmp_path / "herald-home"
    checkpoints = service(herald, workdir)
    turn = checkpoints.turn()
    notice = turn.before_change("terminal", "rm -rf build")
    assert notice is not None and "No checkpoint was taken" in notice and "/rollback" in notice
    assert turn.before_change("terminal", "rm -rf dist") is None  # said once per session
    assert checkpoints.turn().before_change("write_file") is None
    assert not (herald / "checkpoints").exists()


def test_a_remote_backend_gets_no_checkpoint_and_says_why(tmp_path: Path, user_home: Path):
    checkpoints = service(tmp_path / "h", user_home / "code" / "proj", backend="ssh")
    notice = checkpoints.turn().before_change("write_file")
    assert notice is not None and "ssh backend" in notice
    assert checkpoints.store() is None


def test_disabled_checkpoints_take_none_and_say_nothing(tmp_path: Path, user_home: Path):
    checkpoints = service(tmp_path / "h", user_home / "code" / "proj", enabled=False)
    assert checkpoints.turn().before_change("write_file") is None
    assert not (tmp_path / "h" / "checkpoints").exists()


def test_file_tools_checkpoint_once_per_turn_and_commands_every_time(
    tmp_path: Path, user_home: Path
):
    project = user_home / "code" / "proj"
    (project / "a.txt").write_text("1")
    checkpoints = service(tmp_path / "h", project)
    store = store_for(tmp_path / "h", project, CheckpointsConfig())
    turn = checkpoints.turn()
    assert turn.before_change("write_file") is None
    (project / "a.txt").write_text("2")
    turn.before_change("patch")  # same turn: the first file checkpoint stands
    assert len(store.list()) == 1
    turn.before_change("terminal", "rm a.txt")
    assert len(store.list()) == 2
    assert store.list()[0].detail == "rm a.txt" and store.list()[0].turn == "1"
    (project / "a.txt").write_text("3")
    checkpoints.turn().before_change("write_file")  # a new turn checkpoints again
    assert len(store.list()) == 3


def test_covers_answers_for_the_sessions_workdir_and_never_where_refused(
    tmp_path: Path, user_home: Path
):
    project = user_home / "code" / "proj"
    (project / "a.txt").write_text("1")
    checkpoints = service(tmp_path / "h", project)
    turn = checkpoints.turn()
    assert not turn.covers(["a.txt"])  # nothing taken yet
    turn.before_change("terminal", "rm a.txt")
    assert turn.covers(["a.txt", str(project / "a.txt"), "."])
    assert not turn.covers(["../other"])
    assert not service(tmp_path / "h", user_home).covers(["code"])
    assert not service(tmp_path / "h", project, backend="ssh").covers(["a.txt"])


def test_git_failing_after_it_was_found_never_fails_the_call(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """git was on PATH when first asked (the answer is cached), then is not: the
    snapshot fails with a notice, never an exception into the tool call."""
    from herald.checkpoints import git_available

    assert git_available()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    turn = service(user_home / ".herald", user_home / "code" / "proj").turn()
    notice = turn.before_change("terminal", "echo x > f")
    assert notice is not None and "No checkpoint was taken" in notice
