"""Visible economics: every usage row records what its request carried (the parts sum
to the request), and a prefix broken outside a compression is reported once."""

from __future__ import annotations

import dataclasses
import json

from herald.engine import TurnCallbacks
from herald.testing.fake_llm import Reply

TODO = {"todos": [{"id": "1", "content": "x", "status": "pending"}]}


def size(value) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def test_request_split_sums_to_the_request_and_matches_what_was_sent(make_agent, fake_llm):
    fake_llm.enqueue(Reply.tool_call("todo", TODO), Reply.text("done"))
    agent = make_agent(enabled_tools=("todo",))
    result = agent.run_turn("plan")
    rows = agent.store.list_usage(result.session_id)
    sent = fake_llm.model_requests()
    assert len(rows) == len(sent) == 2
    for row, request in zip(rows, sent, strict=True):
        parts = row.system_bytes + row.tools_bytes + row.history_bytes + row.new_bytes
        assert row.request_bytes == parts > 0
        messages = request.body["messages"]
        assert row.system_bytes == size(messages[0])
        assert row.tools_bytes == size(request.body["tools"])
        # The wire form of an assistant message differs by a few bytes (content null).
        wire = sum(map(size, messages))
        assert abs(row.system_bytes + row.history_bytes + row.new_bytes - wire) <= 0.01 * wire
        assert row.prefix_break is None
    first, second = rows
    assert first.history_bytes == 0  # everything was new
    # The second request re-sent the first one's messages and added the reply and result.
    assert second.history_bytes == first.new_bytes
    assert first.system_bytes + first.new_bytes == sum(map(size, sent[0].body["messages"]))


def test_a_changed_prefix_is_reported_once_and_compression_is_not(make_agent, fake_llm):
    statuses: list[str] = []
    agent = make_agent(enabled_tools=("todo",), callbacks=TurnCallbacks(on_status=statuses.append))
    fake_llm.enqueue(Reply.text("one"), Reply.text("two"))
    agent.run_turn("first")
    agent.run_turn("second")
    assert not [s for s in statuses if s.startswith("cache:")]

    # Something rewrites an earlier message outside a compression (a bug, or a plugin).
    messages = agent.transcript.messages
    messages[0] = dataclasses.replace(messages[0], content="first (edited)", api_content=None)
    # Long answers, so that a compression below has something to save (one that would
    # make the history bigger is never applied).
    fake_llm.enqueue(Reply.text("three " + "w" * 6000), Reply.text("four " + "w" * 6000))
    agent.run_turn("third")
    messages[2] = dataclasses.replace(messages[2], content="second (edited)", api_content=None)
    agent.run_turn("fourth")
    told = [s for s in statuses if s.startswith("cache:")]
    assert told == [
        "cache: an earlier message changed since the previous request, so the provider "
        "re-reads the whole prompt this time (costs more once)"
    ]
    rows = agent.store.list_usage(agent.session_id)
    assert [r.prefix_break for r in rows] == [
        None,
        None,
        "an earlier message changed",
        "an earlier message changed",  # logged every time, told once
    ]

    # A compression rewrites the history on purpose: recorded as nothing broken.
    fake_llm.enqueue(Reply.text("summary"), Reply.text("five"))
    assert agent.compress_now()
    agent.run_turn("fifth")
    assert agent.store.list_usage(agent.session_id)[-1].prefix_break is None
    assert len([s for s in statuses if s.startswith("cache:")]) == 1
