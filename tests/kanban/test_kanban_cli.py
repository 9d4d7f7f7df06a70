"""`herald kanban …` as a user runs it (real subprocesses on a temporary home)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _herald(home, *args: str, code: int = 0) -> str:
    env = {**os.environ, "HERALD_HOME": str(home), "COLUMNS": "120"}
    proc = subprocess.run(
        [sys.executable, "-m", "herald", "kanban", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == code, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_owner_runs_the_board_from_the_terminal(tmp_path):
    home = tmp_path / "home"
    assert "task #1 added: draft the talk [todo]" in _herald(
        home, "add", "draft the talk", "-P", "3"
    )
    _herald(home, "add", "book the room", "--after", "1", "-b", "ask facilities")
    out = _herald(home, "link", "2", "1", code=1)
    assert "dependency cycle" in out and "1 → 2" in out
    _herald(home, "assign", "2", "planner")
    _herald(home, "comment", "1", "keep it under 20 minutes")
    tasks = json.loads(_herald(home, "list", "--json"))
    assert [(t["id"], t["assignee"], t["blocked_by"]) for t in tasks] == [
        (1, "any", []),
        (2, "planner", [1]),
    ]
    assert "lease_token" not in tasks[0]
    _herald(home, "block", "1", "waiting for the agenda")
    board = _herald(home, "board")
    assert "blocked (1)" in board and "todo (1)" in board and "#2 book the room" in board
    assert "unblocked" in _herald(home, "unblock", "1", "--note", "agenda is out")
    assert "[done]" in _herald(home, "done", "1", "slides in talk.pdf")
    shown = _herald(home, "show", "1")
    assert "result: slides in talk.pdf" in shown and "keep it under 20 minutes" in shown
    out = _herald(home, "approve", "2", code=1)
    assert "task 2 is todo, not in review; there is nothing to approve" in out
    assert "unknown status" in _herald(home, "list", "--status", "doing", code=2)
    assert "no task 9" in _herald(home, "show", "9", code=1)
