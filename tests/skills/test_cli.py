"""`herald skills …` run in-process through the sub-app (the subprocess version is in
test_cli_subprocess.py and runs once the lead wires the sub-app into `herald`)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import typer
from skill_support import FakeClock, skill_text, write_skill
from typer.testing import CliRunner

from herald.cli import skills_cmd
from herald.config import Settings
from herald.safety import clear_secret_values
from herald.skills import Curator, SkillLibrary, create_skill
from herald.testing.homes import make_home


@pytest.fixture
def home(isolated_env: Path) -> Settings:
    """The home `load(ctx)` resolves (HERALD_HOME points at it)."""
    return make_home(isolated_env, {})


@pytest.fixture
def cli(home: Settings):
    root = typer.Typer()

    @root.callback()
    def _root(ctx: typer.Context) -> None:
        ctx.obj = {"profile": None, "verbose": False}

    root.add_typer(skills_cmd.app, name="skills")
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(root, ["skills", *args])

    root_logger = logging.getLogger()
    level = root_logger.level
    yield run
    # `load(ctx)` sets up logging and secret redaction for a real process; undo both so
    # in-process runs leave nothing behind for later tests.
    for handler in list(root_logger.handlers):
        if getattr(handler, "_herald", False):
            root_logger.removeHandler(handler)
            handler.close()
    root_logger.setLevel(level)
    clear_secret_values()


def test_list_shows_sources_status_and_problems(cli, home: Settings) -> None:
    create_skill(SkillLibrary(home.home, home.config), "made-by-agent", skill_text("made-by-agent"))
    write_skill(home.home.skills_dir, "broken", skill_text("not-broken"))
    result = cli("list")
    assert result.exit_code == 0, result.output
    assert "made-by-agent" in result.output and "agent" in result.output
    assert "debugging" in result.output and "bundled" in result.output
    assert "not loaded:" in result.output and "does not match the directory" in result.output
    only = cli("list", "--category", "writing")
    assert "bug-report" in only.output and "debugging" not in only.output


def test_show_prints_the_skill(cli, home: Settings) -> None:
    result = cli("show", "git-commit")
    assert result.exit_code == 0
    assert "source: bundled" in result.output and "name: git-commit" in result.output
    missing = cli("show", "nope")
    assert missing.exit_code == 2 and "no skill named 'nope'" in missing.output


def test_validate_a_path_and_the_whole_library(cli, home: Settings, tmp_path: Path) -> None:
    good = write_skill(tmp_path / "drafts", "good-one")
    result = cli("validate", str(good))
    assert result.exit_code == 0 and "ok: good-one" in result.output
    bad = write_skill(tmp_path / "drafts", "too-long", skill_text("too-long", "x" * 80))
    result = cli("validate", str(bad / "SKILL.md"))
    assert result.exit_code == 1 and "limit is 60" in result.output
    lenient = cli("validate", "--lenient", str(bad))
    assert lenient.exit_code == 0 and "warning:" in lenient.output
    assert cli("validate").exit_code == 0
    write_skill(home.home.skills_dir, "oops", "no front matter\n")
    everything = cli("validate")
    assert everything.exit_code == 1 and "must start with YAML front matter" in everything.output


def test_archive_restore_pin_unpin(cli, home: Settings) -> None:
    write_skill(home.home.skills_dir, "mine")
    assert "Pinned skill 'mine'" in cli("pin", "mine").output
    assert SkillLibrary(home.home, home.config).get("mine").pinned
    assert cli("unpin", "mine").exit_code == 0
    archived = cli("archive", "mine")
    assert archived.exit_code == 0 and "herald skills restore mine" in archived.output
    assert not (home.home.skills_dir / "mine").exists()
    assert cli("restore", "mine").exit_code == 0
    assert (home.home.skills_dir / "mine" / "SKILL.md").is_file()
    refused = cli("archive", "debugging")
    assert refused.exit_code == 2 and "bundled skill and cannot be modified" in refused.output


def test_rollback_lists_and_restores(cli, home: Settings) -> None:
    assert "no snapshots yet" in cli("rollback", "--list").output
    clock = FakeClock()
    library = SkillLibrary(home.home, home.config, clock=clock)
    create_skill(library, "fleeting", skill_text("fleeting"))
    clock.advance(days=200)
    report = Curator(library, clock=clock).run()
    assert "fleeting" in report.archived
    listed = cli("rollback", "--list")
    assert report.snapshot is not None and report.snapshot.name in listed.output
    result = cli("rollback")
    assert result.exit_code == 0 and "back: fleeting" in result.output
    assert (home.home.skills_dir / "fleeting" / "SKILL.md").is_file()
    assert cli("rollback", "nope").exit_code == 2
