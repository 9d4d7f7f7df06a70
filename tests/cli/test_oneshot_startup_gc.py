"""A one-shot pauses the cyclic garbage collector for its start-up only (herald.cli.startup):
the turn runs with the collector on, and what start-up made is frozen out of its way."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import herald
from herald.cli.startup import pause_collection, resume_collection
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home

# Runs `herald chat -q` in this process; the todo tool's call records the collector's
# state while the turn runs, and the exit hook records it at the end.
PROBE = """
import atexit, gc, json, sys
out = sys.argv.pop(1)
seen = {}
import herald.tools.todo as todo_module
handler = todo_module.TOOLS[0].handler
def spy(args, ctx):
    seen["in_turn"] = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
    return handler(args, ctx)
object.__setattr__(todo_module.TOOLS[0], "handler", spy)
def dump():
    seen["at_exit"] = {"enabled": gc.isenabled()}
    with open(out, "w") as f:
        json.dump(seen, f)
atexit.register(dump)
from herald.cli import main
sys.exit(main())
"""

SOURCE = os.pathsep.join([str(Path(herald.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])


def test_the_turn_runs_with_the_collector_on_and_startup_frozen(tmp_path, fake_llm):
    settings = make_home(tmp_path / "home", fake_model_config(fake_llm))
    fake_llm.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("Done."))
    out = tmp_path / "gc.json"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), "chat", "-q", "Make a todo list."],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "HERALD_HOME": str(settings.home.root), "PYTHONPATH": SOURCE},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done."
    seen = json.loads(out.read_text())
    assert seen["in_turn"]["enabled"] is True
    assert seen["in_turn"]["frozen"] > 10_000  # start-up's objects, out of the collector's way
    assert seen["at_exit"]["enabled"] is True


def test_resume_without_pause_changes_nothing():
    """What runs a one-shot inside another process (the typer app under a test) never
    paused: resuming neither freezes that process's objects nor touches the collector."""
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    resume_collection()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_pause_then_resume_turns_the_collector_back_on():
    assert gc.isenabled()
    pause_collection()
    try:
        assert not gc.isenabled()
    finally:
        resume_collection()
        gc.unfreeze()  # this test process keeps its own objects collectable
    assert gc.isenabled()
