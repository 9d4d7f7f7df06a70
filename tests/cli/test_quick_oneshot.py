"""The fast path of `herald chat -q`: plain one-shots run without the typer app;
anything the small parser is unsure of goes to the app, so help and errors are
the app's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from herald.cli.quick import OneShotArgs, parse_oneshot
from herald.testing.fake_llm import Reply


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["chat", "-q", "hi"], OneShotArgs(query="hi")),
        (
            ["-p", "work", "-v", "chat", "--query=hi", "--json", "-r", "abc", "--max-turns", "3"],
            OneShotArgs(
                query="hi",
                profile="work",
                verbose=True,
                as_json=True,
                resume="abc",
                max_iterations=3,
            ),
        ),
        (["chat", "-q", "hi", "--profile", "work"], OneShotArgs(query="hi", profile="work")),
        (
            ["chat", "-m", "gpt-x", "--provider", "openai", "-q", "two words"],
            OneShotArgs(query="two words", model="gpt-x", provider="openai"),
        ),
    ],
)
def test_plain_one_shots_are_parsed(argv, expected):
    assert parse_oneshot(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["chat"],  # the REPL
        ["chat", "--json"],  # no query: the app's error
        ["chat", "-q", "hi", "--help"],
        ["--help"],
        ["sessions", "list"],
        ["chat", "-q"],  # missing value
        ["chat", "-q", "--json"],  # a value that looks like an option
        ["chat", "-q", "a", "-q", "b"],  # repeated
        ["chat", "-q", "hi", "--max-turns", "0"],
        ["chat", "-q", "hi", "--max-turns", "lots"],
        ["chat", "-q", "hi", "--unknown"],
        ["-q", "hi", "chat"],  # a chat option before the command
        ["chat", "-q", "hi", "chat"],
        ["-p", "a", "chat", "-q", "hi", "-p", "b"],  # two profiles
        ["chat", "-q", "hi", "-v"],  # the app does not hoist --verbose
    ],
)
def test_anything_else_goes_to_the_app(argv):
    assert parse_oneshot(argv) is None


def test_a_one_shot_runs_without_typer(herald_home, fake_llm):
    fake_llm.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("Hello."))
    code = (
        "import sys; sys.argv = ['herald', 'chat', '-q', 'Say hello', '--json']\n"
        "from herald.cli import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    heavy = [m for m in ('typer', 'click', 'openai', 'anthropic', 'httpx2') "
        "if m in sys.modules]\n"
        "    print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["final_text"] == "Hello."
    assert "HEAVY []" in proc.stderr


def test_fail_inside_the_fast_path_keeps_its_exit_code(herald_home, run_cli):
    proc = run_cli("chat", "-q", "hi", "--resume", "nope")
    assert proc.returncode == 2
    assert "nope" in proc.stderr and "Traceback" not in proc.stderr


def test_the_app_still_reports_bad_options(herald_home, run_cli):
    proc = run_cli("chat", "-q", "hi", "--max-turns", "0")
    assert proc.returncode == 2
    assert "--max-turns" in proc.stderr and "Traceback" not in proc.stderr
