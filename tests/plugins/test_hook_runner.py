"""The hook runner and slash-command answering on their own: order, refusals, and a
plugin's exception or hang turned into a message instead of a crash."""

from __future__ import annotations

import threading

from herald.plugins import Deny, Hook, HookRunner, PluginSet, SlashCommand
from herald.plugins.slash import answer_slash_command


def test_hooks_run_by_priority_and_get_only_the_keywords_they_name():
    calls: list[str] = []
    runner = HookRunner(
        (
            Hook("pre_llm_call", lambda user_text: calls.append("low") or "b", "p", 0, 0),
            Hook("pre_llm_call", lambda **kw: calls.append("high") or "a", "p", 9, 1),
            Hook("post_llm_call", lambda: calls.append("other"), "p", 0, 2),
        )
    )
    assert runner.context_for(user_text="x", session_id="s") == ["a", "b"]
    assert calls == ["high", "low"]


def test_the_first_refusal_names_its_hook_and_non_strings_let_the_call_through():
    runner = HookRunner(
        (
            Hook("pre_tool_call", lambda name: True, "yes", 5, 0),
            Hook("pre_tool_call", lambda name: Deny("not today") if name == "x" else None, "no"),
        )
    )
    assert runner.tool_denial("y", {}) is None
    denial = runner.tool_denial("x", {})
    assert (
        denial is not None
        and denial.startswith("refused by plugin hook no:")
        and "not today" in denial
    )


def test_a_slash_command_that_raises_or_hangs_answers_with_what_happened():
    release = threading.Event()
    plugins = PluginSet(hooks=HookRunner(timeout=0.2))
    plugins.slash_commands["boom"] = SlashCommand("boom", lambda: 1 / 0, "h", "bad")
    plugins.slash_commands["slow"] = SlashCommand("slow", lambda: release.wait(10), "h", "bad")
    try:
        boom = answer_slash_command(plugins, "boom", "", session_id=None, surface="cli")
        slow = answer_slash_command(plugins, "slow", "", session_id=None, surface="cli")
    finally:
        release.set()
    assert boom == "/boom (plugin bad) failed: ZeroDivisionError: division by zero"
    assert slow == "/slow (plugin bad) did not answer within 0.2 s."
    assert answer_slash_command(plugins, "none", "", session_id=None, surface="cli") is None
