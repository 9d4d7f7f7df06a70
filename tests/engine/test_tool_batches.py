"""Tool rounds against the fake LLM server: parallel segments, interrupts inside them,
guardrail warnings and halts, and the toolsets an agent exposes."""

from __future__ import annotations

import contextvars
import json
import threading
from typing import Any

import pytest

from herald.engine import CANCELLED_RESULT, ExitReason
from herald.engine.tool_round import GUARDRAIL_SKIPPED_RESULT
from herald.testing.fake_llm import Reply, ToolCallSpec
from herald.testing.transcript_checks import transcript_problems
from herald.tools import GUARDRAIL_HEADER, ToolRegistry, ToolsetError

WAIT = 10.0  # generous: only reached when something is broken
PARAMS = {"type": "object", "properties": {"path": {"type": "string"}}}
REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


def reads(n: int, tool: str = "slow_read") -> Reply:
    return Reply.tool_calls(
        [ToolCallSpec(tool, {"path": f"f{i}.txt"}, id=f"call_{i}") for i in range(n)]
    )


def stored_tool_rows(agent, session_id: str) -> list[Any]:
    return [m for m in agent.store.get_messages(session_id) if m.role == "tool"]


def test_parallel_segment_overlaps_and_results_keep_call_order(make_agent, fake_llm):
    registry = ToolRegistry()
    started = threading.Barrier(3, timeout=WAIT)  # passes only if all three run at once
    others_done = threading.Semaphore(0)
    finished: list[str] = []
    lock = threading.Lock()

    def slow_read(args: dict, ctx) -> str:
        started.wait()
        path = args["path"]
        if path == "f0.txt":  # the first call finishes last
            assert others_done.acquire(timeout=WAIT) and others_done.acquire(timeout=WAIT)
        with lock:
            finished.append(path)
        if path != "f0.txt":
            others_done.release()
        return f"{path} read in context {REQUEST_ID.get()}"

    registry.register(
        "slow_read",
        "test",
        {"description": "r", "parameters": PARAMS},
        slow_read,
        parallel_safe=True,
        reads=("path",),
    )
    fake_llm.enqueue(reads(3), Reply.text("done"))
    agent = make_agent(registry=registry, enabled_tools=("slow_read",))
    token = REQUEST_ID.set("req-42")
    try:
        result = agent.run_turn("read three files")
    finally:
        REQUEST_ID.reset(token)

    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    assert finished[-1] == "f0.txt"  # completion order differs from call order
    rows = stored_tool_rows(agent, result.session_id)
    assert [m.tool_call_id for m in rows] == ["call_0", "call_1", "call_2"]
    assert [m.content for m in rows] == [f"f{i}.txt read in context req-42" for i in range(3)]
    sent = fake_llm.model_requests()[1].messages
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == [
        "call_0",
        "call_1",
        "call_2",
    ]
    assert not transcript_problems(sent)


def test_interrupt_during_a_parallel_segment_answers_every_call(make_agent, fake_llm):
    """Ten parallel calls on eight workers, then a non-parallel call: the interrupt
    reaches the running workers, the queued ones and the later segment."""
    registry = ToolRegistry()
    running = threading.Semaphore(0)

    def waiter(args: dict, ctx) -> str:
        running.release()
        stopped = ctx.cancel.wait(WAIT)
        return f"{args['path']}: {'stopped early' if stopped else 'finished'}"

    registry.register(
        "waiter", "test", {"description": "w", "parameters": PARAMS}, waiter, parallel_safe=True
    )
    registry.register("after", "test", {"description": "a"}, lambda a, c: "ran")
    calls = [ToolCallSpec("waiter", {"path": f"f{i}"}, id=f"call_{i}") for i in range(10)]
    calls.append(ToolCallSpec("after", {}, id="call_after"))
    fake_llm.enqueue(Reply.tool_calls(calls), Reply.text("ok"))
    agent = make_agent(registry=registry, enabled_tools=("waiter", "after"))

    def interrupt_when_eight_run() -> None:
        for _ in range(8):
            assert running.acquire(timeout=WAIT)
        agent.interrupt()

    watcher = threading.Thread(target=interrupt_when_eight_run)
    watcher.start()
    result = agent.run_turn("wait on ten things")
    watcher.join(WAIT)

    assert result.exit_reason is ExitReason.INTERRUPTED_BY_USER
    rows = stored_tool_rows(agent, result.session_id)
    assert [m.tool_call_id for m in rows] == [c.id for c in calls]
    contents = [m.content for m in rows]
    assert all(c.endswith("stopped early") for c in contents[:8])
    assert contents[8:] == [CANCELLED_RESULT] * 3
    stored = [m.to_api() for m in agent.store.get_messages(result.session_id)]
    assert not transcript_problems(stored)


def test_a_worker_that_cannot_run_still_yields_a_result(make_agent, fake_llm):
    registry = ToolRegistry()
    registry.register(
        "probe", "test", {"description": "p"}, lambda a, c: "fine", parallel_safe=True
    )
    fake_llm.enqueue(reads(3, "probe"), Reply.text("ok"))
    agent = make_agent(registry=registry, enabled_tools=("probe",))

    def broken_callback(name: str, args: str) -> None:
        if '"f1.txt"' in args:
            raise RuntimeError("display crashed")

    agent.callbacks.on_tool_start = broken_callback
    result = agent.run_turn("probe")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    rows = stored_tool_rows(agent, result.session_id)
    assert [m.content for m in rows][0::2] == ["fine", "fine"]
    assert rows[1].content.startswith("[TOOL_ERROR]") and "display crashed" in rows[1].content


def _failing_registry() -> ToolRegistry:
    registry = ToolRegistry()

    def missing(args: dict, ctx) -> str:
        raise FileNotFoundError(f"no such file: {args.get('path')}")

    registry.register("open_doc", "test", {"description": "o", "parameters": PARAMS}, missing)
    registry.register("note", "test", {"description": "n"}, lambda a, c: "noted")
    return registry


FAILING_PAIR = [
    ToolCallSpec("open_doc", {"path": "gone.md"}),
    ToolCallSpec("open_doc", {"path": "gone.md"}),
]


def test_guardrail_halt_on_an_unattended_surface(make_agent, fake_llm):
    fake_llm.enqueue(
        Reply.tool_calls(FAILING_PAIR),
        Reply.tool_calls([*FAILING_PAIR, ToolCallSpec("note", {}, id="call_note")]),
        Reply.text("never asked"),
    )
    agent = make_agent(
        registry=_failing_registry(), enabled_tools=("open_doc", "note"), source="cron"
    )
    result = agent.run_turn("open the doc")

    assert result.exit_reason is ExitReason.GUARDRAIL_HALT
    assert result.error and GUARDRAIL_HEADER in result.error
    assert len(fake_llm.model_requests()) == 2
    rows = agent.store.get_messages(result.session_id)
    stored = [m.to_api() for m in rows]
    assert not transcript_problems(stored)
    tools = [m for m in rows if m.role == "tool"]
    assert len(tools) == 5  # every call of both rounds has its result
    assert tools[-1].tool_call_id == "call_note" and tools[-1].content == GUARDRAIL_SKIPPED_RESULT
    assert GUARDRAIL_HEADER not in tools[1].content  # clean text on disk
    assert GUARDRAIL_HEADER in tools[1].api_content  # the warning the model saw
    second = fake_llm.model_requests()[1].messages
    assert GUARDRAIL_HEADER in [m for m in second if m["role"] == "tool"][1]["content"]
    assert agent.store.get_session(result.session_id).last_exit_reason == "guardrail_halt"


def test_guardrail_only_warns_on_the_cli_by_default(make_agent, fake_llm):
    fake_llm.enqueue(*[Reply.tool_calls(FAILING_PAIR) for _ in range(3)], Reply.text("giving up"))
    agent = make_agent(registry=_failing_registry(), enabled_tools=("open_doc", "note"))
    result = agent.run_turn("open the doc")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    last = fake_llm.model_requests()[-1].messages
    warnings = [m for m in last if m["role"] == "tool" and GUARDRAIL_HEADER in m["content"]]
    assert len(warnings) == 5  # every failure from the second on
    assert "change course now" in warnings[-1]["content"]


def test_guardrail_hard_stop_can_be_forced_from_config(make_agent, fake_llm):
    fake_llm.enqueue(*[Reply.tool_calls(FAILING_PAIR) for _ in range(3)], Reply.text("x"))
    agent = make_agent(
        registry=_failing_registry(),
        enabled_tools=("open_doc",),
        config={"guardrails": {"hard_stop": True, "identical_failure_halt": 3}},
    )
    assert agent.run_turn("go").exit_reason is ExitReason.GUARDRAIL_HALT


def test_guardrail_warning_and_steer_share_the_last_result(make_agent, fake_llm):
    fake_llm.enqueue(Reply.tool_calls(FAILING_PAIR), Reply.text("ok"))
    agent = make_agent(registry=_failing_registry(), enabled_tools=("open_doc",))
    agent.callbacks.on_tool_start = lambda *_: agent.steer("try the backup copy")
    agent.run_turn("open")
    last_tool = [m for m in fake_llm.model_requests()[1].messages if m["role"] == "tool"][-1]
    text = last_tool["content"]
    assert text.index(GUARDRAIL_HEADER) < text.index("try the backup copy")


# ---- toolsets on the agent ----------------------------------------------------------------


def _tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.tools or []]


def test_default_agent_exposes_the_cli_bundle_and_fills_the_tool_context(make_agent, fake_llm):
    fake_llm.enqueue(Reply.text("hi"))
    agent = make_agent(env={"SOME_TOKEN": "abc123"})
    agent.run_turn("hello")
    names = _tool_names(fake_llm.model_requests()[0])
    assert names[0] == "todo" and names == list(agent.enabled_tools)
    ctx = agent.tool_context
    assert ctx.home == agent.home and ctx.config is agent.config and ctx.surface == "cli"
    assert ctx.secrets is not None and ctx.secrets.get("SOME_TOKEN") == "abc123"


def test_config_disabled_hides_tools_from_the_model(make_agent, fake_llm):
    fake_llm.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("ok"))
    agent = make_agent(config={"toolsets": {"disabled": ["todo"]}})
    agent.run_turn("plan")
    assert "todo" not in _tool_names(fake_llm.model_requests()[0])
    tool_msg = next(m for m in fake_llm.model_requests()[1].messages if m["role"] == "tool")
    assert "not available" in tool_msg["content"]


def test_unknown_toolset_fails_loudly_when_the_agent_is_built(make_agent):
    with pytest.raises(ToolsetError, match=r"'herald-cil'.*herald-cli"):
        make_agent(toolset="herald-cil")
    with pytest.raises(ToolsetError, match=r"toolsets\.enabled"):
        make_agent(config={"toolsets": {"enabled": ["webb"]}})


def test_surface_bundles_differ(make_agent, fake_llm):
    registry = ToolRegistry()
    for name, toolset in (("todo", "core"), ("write_file", "file"), ("web_search", "web")):
        registry.register(name, toolset, {"description": name}, lambda a, c: "x")
    fake_llm.default_reply = Reply.text("ok")
    cli = make_agent(registry=registry)
    hook = make_agent(registry=registry, toolset="herald-webhook", source="webhook")
    assert cli.enabled_tools == ("todo", "write_file", "web_search")
    assert hook.enabled_tools == ("todo", "web_search")
    assert hook.tool_context.surface == "webhook"


def test_tool_definitions_are_a_fresh_copy_each_turn(make_agent, fake_llm):
    agent = make_agent()
    first = agent.tool_definitions()
    assert first is not None
    first.append({"type": "function", "function": {"name": "rogue"}})
    first[0]["function"]["parameters"]["properties"].clear()
    again = agent.tool_definitions()
    assert "rogue" not in json.dumps(again)
    assert again[0]["function"]["parameters"]["properties"]
