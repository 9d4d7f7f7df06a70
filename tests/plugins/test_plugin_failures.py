"""One broken plugin never breaks Herald: each failure disables that plugin (or skips that
hook) with one message saying which, what failed and what to do; the turn goes on."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from plugin_support import write_plugin

from herald.engine.callbacks import TurnCallbacks
from herald.testing.fake_llm import Reply

GOOD = """
def hello(ctx) -> str:
    \"\"\"Say hello.\"\"\"
    return "hello from good"

def register(ctx):
    ctx.register_tool(hello)
"""


def _agent(make_agent, enabled, config=None):
    statuses: list[str] = []
    cfg = {"plugins": {"enabled": enabled, **(config or {})}}
    agent = make_agent(config=cfg, callbacks=TurnCallbacks(on_status=statuses.append))
    return agent, statuses


@pytest.mark.parametrize(
    ("code", "manifest", "expected"),
    [
        ("import no_such_module_xyz\n", {}, "failed to import (ModuleNotFoundError"),
        ("def register(ctx):\n    raise RuntimeError('boom')\n", {}, "register(ctx) raised"),
        ("x = 1\n", {}, "has no register(ctx) function"),
        (
            "def register(ctx):\n    pass\n",
            {"requires": {"python": ["no-such-dist-xyz>=1"]}},
            "missing Python packages: no-such-dist-xyz>=1; run: pip install",
        ),
        (
            "def register(ctx):\n    pass\n",
            {"requires": {"herald": ">=99"}},
            "it needs Herald >=99 and this is Herald",
        ),
        (
            "def register(ctx):\n    ctx.register_hook('on_tuesday', print)\n",
            {},
            "unknown hook event 'on_tuesday'",
        ),
    ],
    ids=[
        "import-error",
        "register-raises",
        "no-register",
        "unmet-requirement",
        "herald-version",
        "bad-event",
    ],
)
def test_a_broken_plugin_is_disabled_and_the_rest_still_work(
    make_agent, fake_llm, tmp_path: Path, code, manifest, expected
):
    plugins = tmp_path / "home" / "plugins"
    write_plugin(plugins, "broken", code, **manifest)
    write_plugin(plugins, "good", GOOD)
    fake_llm.enqueue(Reply.tool_call("hello", {}), Reply.text("done"))
    agent, statuses = _agent(make_agent, ["broken", "good"])
    result = agent.run_turn("hi")
    assert result.final_text == "done"
    tool = [m for m in fake_llm.model_requests()[1].messages if m["role"] == "tool"][-1]
    assert tool["content"] == "hello from good"
    said = [s for s in statuses if "'broken'" in s]
    assert len(said) == 1 and expected in said[0] and "is disabled" in said[0]
    assert not any("'good'" in s for s in statuses)


def test_an_enabled_plugin_that_does_not_exist_is_named(make_agent, fake_llm):
    fake_llm.enqueue(Reply.text("ok"))
    agent, statuses = _agent(make_agent, ["ghost"])
    assert agent.run_turn("hi").final_text == "ok"
    assert any("'ghost'" in s and "herald plugins list" in s for s in statuses)


HOOKS = """
import threading
RELEASE = threading.Event()

def broken(user_text):
    raise ValueError("hook bug")

def hangs(user_text):
    RELEASE.wait(30)
    return "too late"

def fine(user_text):
    return "fine context"

def register(ctx):
    ctx.register_hook("pre_llm_call", broken, priority=10)
    ctx.register_hook("pre_llm_call", hangs, priority=5)
    ctx.register_hook("pre_llm_call", fine)
"""


def test_a_hook_that_raises_or_hangs_is_skipped(make_agent, fake_llm, tmp_path: Path):
    import sys

    write_plugin(tmp_path / "home" / "plugins", "hooky", HOOKS)
    fake_llm.enqueue(Reply.text("answer"), Reply.text("again"))
    agent, statuses = _agent(make_agent, ["hooky"], {"hook_timeout_seconds": 0.2})
    try:
        assert agent.run_turn("hi").final_text == "answer"
        assert agent.run_turn("hi again").final_text == "again"
    finally:
        for module in list(sys.modules.values()):
            release = getattr(module, "RELEASE", None)
            if isinstance(release, threading.Event) and "hooky" in module.__name__:
                release.set()
    user = fake_llm.model_requests()[0].messages[-1]["content"]
    assert "fine context" in user and "too late" not in user
    failed = [s for s in statuses if "hook bug" in s]
    slow = [s for s in statuses if "took longer than 0.2 s" in s]
    assert len(failed) == 1 and "hooky:broken" in failed[0]  # said once, not every turn
    assert len(slow) == 1 and "plugins.hook_timeout_seconds" in slow[0]


CLASH = """
def read_file(ctx, path: str) -> str:
    \"\"\"A plugin's own read_file.

    Args:
        path: a path
    \"\"\"
    return "plugin read " + path

def register(ctx):
    ctx.register_tool(read_file)
"""


def test_a_plugin_tool_clashing_with_a_built_in_is_namespaced(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "shadow", CLASH)
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "work" / "a.txt").write_text("real content\n")
    fake_llm.enqueue(
        Reply.tool_call("read_file", {"path": "a.txt"}),
        Reply.tool_call("shadow__read_file", {"path": "a.txt"}),
        Reply.text("done"),
    )
    agent, statuses = _agent(make_agent, ["shadow"])
    # Where the full schema goes is what this test checks; deferral has its own tests.
    agent = make_agent(
        config={"plugins": {"enabled": ["shadow"]}, "toolsets": {"defer_external": False}},
        callbacks=TurnCallbacks(on_status=statuses.append),
    )
    agent.run_turn("read it")
    requests = fake_llm.model_requests()
    names = [t["function"]["name"] for t in requests[0].tools]
    assert names.count("read_file") == 1 and names[-1] == "shadow__read_file"
    builtin = [m for m in requests[1].messages if m["role"] == "tool"][-1]["content"]
    plugin = [m for m in requests[2].messages if m["role"] == "tool"][-1]["content"]
    assert "real content" in builtin and plugin == "plugin read a.txt"
    assert any("'read_file' is offered as 'shadow__read_file'" in s for s in statuses)


DENY = """
from herald.plugins import Deny

def guard(name, args):
    if name == "terminal":
        return Deny("no shell today")
    return None

def register(ctx):
    ctx.register_hook("pre_tool_call", guard)
"""


def test_pre_tool_call_denies_with_a_reason(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "guard", DENY)
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "echo hi"}), Reply.text("ok"))
    agent, statuses = _agent(make_agent, ["guard"])
    agent.run_turn("run echo")
    tool = [m for m in fake_llm.model_requests()[1].messages if m["role"] == "tool"][-1]
    assert tool["content"].startswith("[TOOL_ERROR]")
    assert "refused by plugin hook guard:guard: no shell today" in tool["content"]
    assert any("no shell today" in s for s in statuses)


APPROVER = """
def approve_everything(name, args):
    return True  # not a refusal: the call goes on to the approval layer, which decides

def register(ctx):
    ctx.register_hook("pre_tool_call", approve_everything)
"""


def test_a_hook_cannot_approve_what_the_approval_layer_refuses(
    make_agent, fake_llm, tmp_path: Path
):
    write_plugin(tmp_path / "home" / "plugins", "yes", APPROVER)
    victim = tmp_path / "work" / "keep"
    victim.mkdir(parents=True)
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "rm -rf keep"}), Reply.text("ok"))
    agent, _ = _agent(make_agent, ["yes"])
    agent.run_turn("clean up")  # unattended: no human, so the dangerous command is denied
    tool = [m for m in fake_llm.model_requests()[1].messages if m["role"] == "tool"][-1]
    assert victim.exists()
    assert "Not run: `rm -rf keep` is not known read-only" in tool["content"]


def test_two_plugins_registering_one_memory_provider_name(make_agent, fake_llm, tmp_path):
    code = """
from herald.memory import MemoryProvider
class P(MemoryProvider):
    def prefetch(self, query):
        return "from %s"
    def sync_turn(self, user, assistant):
        pass
def register(ctx):
    ctx.register_memory_provider("shared", P)
"""
    plugins = tmp_path / "home" / "plugins"
    write_plugin(plugins, "alpha", code % "alpha")
    write_plugin(plugins, "beta", code % "beta")
    fake_llm.enqueue(Reply.text("ok"))
    agent, statuses = _agent(make_agent, ["alpha", "beta"])
    agent.run_turn("hello there, what do you recall?")
    said = " ".join(statuses)
    assert "memory provider 'shared' of plugin 'beta' refused: plugin 'alpha'" in said


def test_registering_what_plugin_yaml_does_not_list_is_noted(make_agent, fake_llm, tmp_path):
    write_plugin(tmp_path / "home" / "plugins", "good", GOOD, provides=["hooks"])
    fake_llm.enqueue(Reply.text("ok"))
    agent, statuses = _agent(make_agent, ["good"])
    agent.run_turn("hi")
    assert any("'good' registers tools but its plugin.yaml `provides`" in s for s in statuses)
