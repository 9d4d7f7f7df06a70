"""The list commands as a person sees them at 80 columns (a pseudo-terminal rendered by
pyte): every identifier stands whole on one line, so it can be copied into the next
command; the free-text column gives way. Piped, the same commands print no escape codes
and no box drawing, and each has --json."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pexpect
import pytest
import yaml
from screen_support import Screen

from herald.state import StateStore
from herald.testing.homes import make_home

LONG = "a remarkably long title that goes on about the details of what was done " * 3
ESCAPES = re.compile(r"\x1b\[|[─━│┃┏┓┗┛╭╮╰╯┌┐└┘├┤┬┴┼]")


def _cli(home, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    return subprocess.run(
        [sys.executable, "-m", "herald", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "HERALD_HOME": str(home)},
    )


@pytest.fixture(scope="module")
def filled_home(tmp_path_factory):
    """One home with long titles and long ids in every list, made once for the module
    (the list commands never call the model)."""
    home = tmp_path_factory.mktemp("lists") / "home"
    make_home(home, {"model": {"provider": "custom", "base_url": "http://127.0.0.1:9/v1",
                               "name": "fake-model"}})  # fmt: skip
    with StateStore(home / "state.db") as store:
        sessions = [store.create_session(source="cli", title=f"{i}: {LONG}") for i in range(3)]
    jobs = ["nightly-dependency-audit-of-every-repository", "weekly-report"]
    for name in jobs:
        proc = _cli(
            home, "cron", "add", name, "--schedule", "every 2h", "--prompt", LONG,
            "--deliver", "log",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    proc = _cli(home, "kanban", "add", LONG)
    assert proc.returncode == 0, proc.stderr
    plugin = "a-plugin-with-a-rather-long-name"
    proc = _cli(home, "plugins", "new", plugin)
    assert proc.returncode == 0, proc.stderr
    config_path = home / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["mcp"] = {
        "servers": {
            "filesystem-documents-folder-2026": {
                "command": sys.executable,
                "args": ["-c", "pass"],
                "enabled": False,
            }
        }
    }
    config_path.write_text(yaml.safe_dump(config))
    return home, {
        "sessions": sessions,
        "cron": jobs,
        "kanban": ["#1"],
        "plugins": [plugin],
        "mcp": ["filesystem-documents-folder-2026"],
    }


COMMANDS = {
    "sessions": ["sessions", "list"],
    "cron": ["cron", "list"],
    "kanban": ["kanban", "list"],
    "plugins": ["plugins", "list"],
    "mcp": ["mcp", "list"],
}


@pytest.mark.parametrize("what", sorted(COMMANDS))
def test_ids_stand_whole_on_one_line_at_80_columns(what, filled_home, tmp_path):
    home, ids = filled_home
    screen = Screen(tmp_path, *COMMANDS[what], cols=80, env={"HERALD_HOME": str(home)})
    try:
        screen.child.expect(pexpect.EOF, timeout=30)
        screen.stream.feed(screen.child.before or b"")
        screen.pump(0.2)
        lines = screen.lines
        for ident in ids[what]:
            assert any(ident in line for line in lines), (ident, screen.text)
        assert all(len(line) <= 80 for line in lines)
    finally:
        screen.close()


@pytest.mark.parametrize("what", sorted(COMMANDS))
def test_piped_output_is_plain_and_json_parses(what, filled_home):
    home, ids = filled_home
    proc = _cli(home, *COMMANDS[what])
    assert proc.returncode == 0, proc.stderr
    assert not ESCAPES.search(proc.stdout), proc.stdout
    for ident in ids[what]:
        assert ident in proc.stdout
    as_json = _cli(home, *COMMANDS[what], "--json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert ids[what][-1].lstrip("#") in json.dumps(data)


def test_the_title_gives_way_not_the_id():
    from herald.cli.tables import Column, table_lines

    rows = [("20261201-224918-a55a0d", "2026-12-01 22:49", "telegram", LONG)]
    lines = table_lines([Column("id"), Column("updated"), Column("source"),
                         Column("title", flex=True)], rows, 70)  # fmt: skip
    assert lines[1].startswith("20261201-224918-a55a0d  2026-12-01 22:49  telegram")
    assert lines[1].endswith("…") and len(lines[1]) == 70
    # Too narrow for even the fixed columns: the line grows; nothing is cut.
    lines = table_lines([Column("id"), Column("title", flex=True)], [(rows[0][0], LONG)], 10)
    assert "20261201-224918-a55a0d" in lines[1]


def test_the_board_and_usage_errors_are_plain_in_a_pipe(filled_home):
    home, _ids = filled_home
    board = _cli(home, "kanban", "board")
    assert board.returncode == 0, board.stderr
    assert not ESCAPES.search(board.stdout) and "todo (1)" in board.stdout
    assert "#1 " in board.stdout
    wrong = _cli(home, "kanban", "list", "--no-such-flag")
    assert wrong.returncode == 2
    assert "No such option: --no-such-flag" in wrong.stderr
    assert not ESCAPES.search(wrong.stderr), wrong.stderr
