"""A turn end to end against the fake LLM server: answers, tools, persistence, the
frozen system prompt and one HTTP request per model call."""

from __future__ import annotations

import json

import pytest

from herald.engine import ExitReason
from herald.state import StateStore
from herald.testing.fake_llm import Reply, ToolCallSpec
from herald.testing.transcript_checks import transcript_problems
from herald.tools.todo import TodoList

TODOS = {"todos": [{"id": "1", "content": "write tests", "status": "in_progress"}]}


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_text_answer_is_returned_and_stored(make_agent, fake_llm, api):
    fake_llm.enqueue(Reply.text("Hello there."))
    agent = make_agent(api=api)
    result = agent.run_turn("Say hello")

    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    assert result.completed
    assert result.final_text == "Hello there."
    assert result.api_calls == 1
    assert result.usage.prompt_tokens > 0
    rows = agent.store.get_messages(result.session_id)
    assert [(m.role, m.content) for m in rows] == [
        ("user", "Say hello"),
        ("assistant", "Hello there."),
    ]
    session = agent.store.get_session(result.session_id)
    assert session.last_exit_reason == "text_response"
    assert session.title == "Say hello"
    assert session.api_calls == 1 and session.prompt_tokens == result.usage.prompt_tokens
    assert len(agent.store.list_usage(result.session_id)) == 1


def test_todo_tool_round_trip(make_agent, fake_llm):
    fake_llm.enqueue(Reply.tool_call("todo", TODOS), Reply.text("Planned."))
    agent = make_agent()
    result = agent.run_turn("plan my work")

    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    assert result.api_calls == 2
    second = fake_llm.model_requests()[1]
    tool_msgs = [m for m in second.messages if m["role"] == "tool"]
    assert len(tool_msgs) == 1
    assert json.loads(tool_msgs[0]["content"])["todos"][0]["content"] == "write tests"
    assert not transcript_problems(second.messages)
    roles = [m.role for m in agent.store.get_messages(result.session_id)]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_one_http_request_per_model_call(make_agent, fake_llm):
    fake_llm.enqueue(
        Reply.tool_call("todo", TODOS),
        Reply.tool_call("todo", {"todos": [{"id": "1", "status": "completed"}], "merge": True}),
        Reply.text("done"),
    )
    agent = make_agent()
    result = agent.run_turn("go")
    assert result.api_calls == 3
    assert len(fake_llm.requests) == 3  # no model-list or probe requests either
    assert all(r.api == "openai" for r in fake_llm.requests)


def test_system_prompt_is_byte_identical_across_a_session(make_agent, fake_llm):
    """Invariant 1: every request of a session, across turns and a resume, carries the
    same system prompt bytes."""
    fake_llm.default_reply = Reply.text("ok")
    fake_llm.enqueue(*[Reply.tool_call("todo", TODOS) for _ in range(5)], Reply.text("a"))
    agent = make_agent()
    first = agent.run_turn("one")
    agent.run_turn("two")
    resumed = make_agent(session_id=first.session_id)
    resumed.run_turn("three")

    prompts = {r.system for r in fake_llm.model_requests()}
    assert len(fake_llm.model_requests()) == 8
    assert len(prompts) == 1
    stored = agent.store.get_system_prompt(
        agent.store.get_session(first.session_id).system_prompt_hash
    )
    assert prompts == {stored}
    assert f"Session: {first.session_id}" in stored


def test_system_prompt_has_no_mid_session_context(make_agent, fake_llm):
    """Invariant 2: what changes during a session (steer) rides on tool messages."""
    fake_llm.enqueue(Reply.tool_call("todo", TODOS), Reply.text("ok"))
    agent = make_agent()

    def steer_during_tool(_name, _args):  # the user types while the tool runs
        agent.steer("also check the docs")

    agent.callbacks.on_tool_start = steer_during_tool
    result = agent.run_turn("work")
    second = fake_llm.model_requests()[1]
    assert "also check the docs" not in second.system
    assert "also check the docs" in second.messages[-1]["content"]
    assert second.messages[-1]["role"] == "tool"
    stored_tool = next(m for m in agent.store.get_messages(result.session_id) if m.role == "tool")
    assert "also check the docs" not in stored_tool.content  # clean text on disk
    assert "also check the docs" in stored_tool.api_content  # what the model saw


def test_leftover_steer_is_returned(make_agent, fake_llm):
    fake_llm.enqueue(Reply.text("answer"))
    agent = make_agent()

    def steer_now(_text):
        agent.steer("one more thing")

    agent.callbacks.on_text_delta = steer_now
    result = agent.run_turn("question")
    assert result.completed
    assert result.leftover_steer == "one more thing"
    assert all("one more thing" not in json.dumps(r.messages) for r in fake_llm.model_requests())


def test_assistant_message_is_on_disk_before_the_tool_runs(make_agent, fake_llm, tmp_path):
    """Invariant 5: when a tool starts, its call is already persisted (checked from a
    separate connection, as another process would see it)."""
    from herald.tools import ToolRegistry

    seen: list[bool] = []
    registry = ToolRegistry()

    def probe(_args, ctx):
        with StateStore(agent.home.state_db) as other:
            rows = other.get_messages(ctx.session_id)
        seen.append(any(m.tool_calls and m.tool_calls[0]["id"] == "call_probe" for m in rows))
        return "probed"

    registry.register(
        "probe", "test", {"description": "probe", "parameters": {"type": "object"}}, probe
    )
    fake_llm.enqueue(
        Reply.tool_calls([ToolCallSpec("probe", {}, id="call_probe")]), Reply.text("k")
    )
    agent = make_agent(registry=registry, enabled_tools=("probe",))
    agent.run_turn("probe it")
    assert seen == [True]


def test_unknown_and_disabled_tools_get_error_results(make_agent, fake_llm):
    fake_llm.enqueue(
        Reply.tool_calls([ToolCallSpec("nope", {}), ToolCallSpec("todo", "{not json")]),
        Reply.text("ok"),
    )
    agent = make_agent()
    result = agent.run_turn("x")
    assert result.completed
    tools = [m for m in fake_llm.model_requests()[1].messages if m["role"] == "tool"]
    assert tools[0]["content"].startswith("[TOOL_ERROR]") and "not available" in tools[0]["content"]
    assert tools[1]["content"].startswith("[TOOL_ERROR]") and "valid JSON" in tools[1]["content"]


def test_streaming_deltas_reach_the_callback(make_agent, fake_llm):
    fake_llm.enqueue(Reply.text("streamed answer here", chunk_size=3))
    chunks: list[str] = []
    agent = make_agent()
    agent.callbacks.on_text_delta = chunks.append
    result = agent.run_turn("hi")
    assert len(chunks) > 1
    assert "".join(chunks) == result.final_text == "streamed answer here"
    assert fake_llm.model_requests()[0].stream


def test_todo_state_is_rebuilt_on_resume(make_agent, fake_llm):
    fake_llm.enqueue(Reply.tool_call("todo", TODOS), Reply.text("ok"))
    first = make_agent()
    sid = first.run_turn("plan").session_id
    resumed = make_agent(session_id=sid)
    assert resumed.tool_context.own(TodoList).items == TODOS["todos"]


def test_soul_md_replaces_the_default_identity(make_agent, fake_llm):
    agent = make_agent()
    agent.home.soul_path.write_text("You are Ada, a terse lab assistant.", encoding="utf-8")
    fake_llm.enqueue(Reply.text("ok"))
    agent.run_turn("hi")
    system = fake_llm.model_requests()[0].system
    assert system.startswith("You are Ada, a terse lab assistant.")
    assert "You are Herald" not in system
