"""Deferred tool schemas: listed by name and one line in `tool_search`, loaded on demand,
then called normally; loaded schemas are appended at the end of the tools array (the
cached prefix stays put) for the rest of the session, also after a resume."""

from __future__ import annotations

import json

from herald.engine import ExitReason, TurnCallbacks
from herald.testing.fake_llm import Reply

TODO = {"todos": [{"id": "1", "content": "x", "status": "pending"}]}
DEFER_TODO = {"toolsets": {"deferred": ["todo"]}}


def names(request) -> list[str]:
    return [t["function"]["name"] for t in request.tools]


def test_deferred_tool_is_loaded_by_tool_search_then_called(make_agent, fake_llm):
    statuses: list[str] = []
    fake_llm.enqueue(
        Reply.tool_call("tool_search", {"names": ["todo"]}),
        Reply.tool_call("todo", TODO),
        Reply.text("planned"),
    )
    agent = make_agent(
        config=DEFER_TODO,
        enabled_tools=("todo", "read_file"),
        callbacks=TurnCallbacks(on_status=statuses.append),
    )
    result = agent.run_turn("plan")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    first, second, third = fake_llm.model_requests()
    assert names(first) == ["read_file", "tool_search"]
    search = first.tools[1]["function"]["description"]
    assert "- todo: " in search and "read_file" not in search
    assert names(second) == ["read_file", "tool_search", "todo"]  # appended at the end
    assert second.tools[:2] == first.tools[:2]  # the prefix did not move
    loaded = json.loads(next(m for m in second.messages if m["role"] == "tool")["content"])
    assert loaded["loaded"] == ["todo"] and loaded["schemas"][0]["name"] == "todo"
    tool_results = [m for m in third.messages if m["role"] == "tool"]
    assert '"pending": 1' in tool_results[-1]["content"]  # todo ran for real
    rows = agent.store.list_usage(result.session_id)
    assert rows[1].prefix_break == "tool_search loaded todo"  # deliberate: logged, not told
    assert not [s for s in statuses if s.startswith("cache:")]
    assert rows[0].tools_bytes < rows[1].tools_bytes

    # The loaded schema stays for the rest of the session, also in a resumed agent.
    fake_llm.enqueue(Reply.text("again"))
    resumed = make_agent(
        config=DEFER_TODO, enabled_tools=("todo", "read_file"), session_id=result.session_id
    )
    resumed.run_turn("more")
    assert names(fake_llm.model_requests()[-1]) == ["read_file", "tool_search", "todo"]


def test_a_deferred_tool_called_directly_runs_and_loads(make_agent, fake_llm):
    fake_llm.enqueue(Reply.tool_call("todo", TODO), Reply.text("ok"))
    agent = make_agent(config=DEFER_TODO, enabled_tools=("todo", "read_file"))
    assert agent.run_turn("plan").exit_reason is ExitReason.TEXT_RESPONSE
    first, second = fake_llm.model_requests()
    assert "todo" not in names(first) and names(second)[-1] == "todo"


def test_tool_search_by_query_and_unknown_names(make_agent, fake_llm):
    fake_llm.enqueue(
        Reply.tool_call("tool_search", {"names": ["nope"]}),
        Reply.tool_call("tool_search", {"query": "TODO"}),
        Reply.text("ok"),
    )
    agent = make_agent(config=DEFER_TODO, enabled_tools=("todo", "read_file"))
    agent.run_turn("find")
    requests = fake_llm.model_requests()
    miss = [m for m in requests[1].messages if m["role"] == "tool"][-1]["content"]
    assert "no deferred tool matches" in miss and "todo" in miss
    hit = json.loads([m for m in requests[2].messages if m["role"] == "tool"][-1]["content"])
    assert hit["loaded"] == ["todo"]
