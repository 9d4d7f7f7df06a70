"""A one-shot imports what its turn uses (issue 32): a capability's module when the turn
calls one of its tools (offering a tool reads the shipped catalog, herald.toolbox), the
command rules when a command is checked, and nothing of cron, the board, MCP, delegation
or the gateway it does not use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import herald
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge

# Runs `herald chat -q` in this process and writes the modules it imported.
PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)
def dump():
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
atexit.register(dump)
from herald.cli import main
sys.exit(main())
"""

# The Herald under test, whatever the subprocess's working directory.
SOURCE = os.pathsep.join([str(Path(herald.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])

NEVER_IN_A_PLAIN_ONESHOT = (
    "herald.cron",  # cronjob is offered, not called
    "herald.kanban",
    "herald.mcp",
    "herald.delegation",  # delegate_task is offered, not called
    "herald.tools.file_tools",  # offered, not called
    "herald.tools.write_gate",
    "herald.tools.web.extract_tool",  # web_extract offered; web_search's check ran
    "herald.tools.web.search_tool",
    "herald.gateway",
    "herald.acp",
    "herald.safety.command_rules",  # no command was checked
    "herald.safety.approval",
    "herald.safety.scan_rules",  # nothing was scanned: only bundled skills, no AGENTS.md
    "herald.safety.scan_agent",
    "herald.environments.docker",  # the local backend was chosen
    "herald.environments.bwrap",
    "herald.environments.ssh",
)


def _oneshot_modules(tmp_path: Path, fake_llm, config: dict, *replies: Reply) -> list[str]:
    settings = make_home(tmp_path / "home", merge(fake_model_config(fake_llm), config))
    fake_llm.enqueue(*replies)
    out = tmp_path / "modules.json"
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), "chat", "-q", "Make a todo list, then say done."],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=work,
        env={**os.environ, "HERALD_HOME": str(settings.home.root), "PYTHONPATH": SOURCE},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _imported(modules: list[str], prefix: str) -> list[str]:
    return [m for m in modules if m == prefix or m.startswith(prefix + ".")]


def test_a_plain_oneshot_imports_only_what_its_turn_uses(tmp_path, fake_llm):
    modules = _oneshot_modules(
        tmp_path, fake_llm, {}, Reply.tool_call("todo", {"todos": []}), Reply.text("Done.")
    )
    assert "herald.tools.todo" in modules  # the turn's tool ran
    offered = [t["function"]["name"] for t in fake_llm.model_requests()[0].body["tools"]]
    assert {"cronjob", "delegate_task", "write_file"} <= set(offered)  # offered all the same
    unwanted = [m for prefix in NEVER_IN_A_PLAIN_ONESHOT for m in _imported(modules, prefix)]
    assert unwanted == [], unwanted


def test_what_a_turn_calls_is_imported(tmp_path, fake_llm):
    """The same check the other way round (so the first cannot pass by accident): call
    a board tool, schedule a job and run a command, and their modules load."""
    modules = _oneshot_modules(
        tmp_path,
        fake_llm,
        {"toolsets": {"enabled": ["kanban"]}, "approvals": {"mode": "off"}},
        Reply.tool_calls(
            [
                {"name": "kanban_list", "arguments": {}},
                {"name": "cronjob", "arguments": {"action": "list"}},
                {"name": "terminal", "arguments": {"command": "echo hi"}},
            ]
        ),
        Reply.text("Done."),
    )
    assert "herald.kanban.tools" in modules
    assert "herald.cron.tool" in modules
    assert "herald.safety.command_rules" in modules
    assert "herald.environments.local" in modules
    assert "herald.delegation" not in modules  # offered, never called


def test_a_oneshot_when_the_curator_is_not_due_does_not_load_it(tmp_path, fake_llm):
    """The first one-shot of a home runs the skills curator (it never ran); the next one
    only checks that it is not due, which loads none of its code."""
    replies = (Reply.text("Done."),)
    first = _oneshot_modules(tmp_path, fake_llm, {}, *replies)
    assert "herald.skills.curator" in first
    second = _oneshot_modules(tmp_path, fake_llm, {}, *replies)
    assert "herald.skills.curator" not in second
    assert "herald.skills.snapshots" not in second
    assert "filelock" not in second  # nothing wrote to the skill library
