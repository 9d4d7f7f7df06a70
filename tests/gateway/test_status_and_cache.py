"""The status line (throttled edits, finalized) and the agent cache (idle and cap)."""

from __future__ import annotations

import asyncio

from herald.gateway.agents import AgentCache
from herald.gateway.status_line import StatusLine, describe_tool
from herald.gateway.testing import LoopbackAdapter
from herald.testing.fake_llm import Reply


def test_tool_descriptions_are_short_and_redacted() -> None:
    assert (
        describe_tool("terminal", '{"command": "pytest -x tests"}')
        == "running terminal: pytest -x tests"
    )
    assert describe_tool("todo", "{}") == "running todo"
    assert describe_tool("read_file", "not json") == "running read_file"
    long = describe_tool("terminal", '{"command": "' + "y" * 500 + '"}')
    assert len(long) <= 120 and long.endswith("…")
    secret = describe_tool(
        "terminal", '{"command": "curl -H \'Authorization: Bearer abcdef123456789\'"}'
    )
    assert "abcdef123456789" not in secret


async def test_updates_are_throttled_and_end_on_the_latest_text() -> None:
    chat = LoopbackAdapter()
    line = StatusLine(chat, "c", None, interval=0.3)
    for i in range(10):
        line.update(f"step {i}")
        await asyncio.sleep(0.01)
    await chat.wait_for(lambda a: bool(a.sent) and a.sent[0].text.endswith("step 9"), timeout=2)
    message = chat.sent[0]
    assert len(chat.sent) == 1  # one message, edited in place
    assert message.text == "⚙ step 9"
    assert len(message.edits) == 1  # ten updates within one interval: one edit
    await line.finalize("✓ done")
    assert message.text == "✓ done" and len(message.edits) == 2


async def test_a_quick_turn_leaves_no_status_message() -> None:
    chat = LoopbackAdapter()
    line = StatusLine(chat, "c", None, interval=1.0)
    await line.finalize("✓ done")
    assert chat.sent == []


async def test_no_status_line_where_the_platform_cannot_edit() -> None:
    chat = LoopbackAdapter(edits=False)
    line = StatusLine(chat, "c", None, interval=0)
    line.update("running terminal")
    await asyncio.sleep(0.05)
    await line.finalize("✓ done")
    assert chat.sent == []


async def test_a_turn_shows_its_tools_in_the_status_line(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "echo one"}),
        Reply.tool_call("terminal", {"command": "echo two"}),
        Reply.text("all done"),
    )
    await chat.inject("run two things")
    status, reply = chat.sent
    assert reply.text == "all done"
    assert status.history[0] == "⚙ running terminal: echo one"
    assert "⚙ running terminal: echo two" in status.history
    assert status.text.startswith("✓ done · 2 tool calls")


# ---- the agent cache ------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Closable:
    """A stand-in session holder that records being closed."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_idle_agents_are_evicted_and_closed() -> None:
    clock = FakeClock()
    cache = AgentCache(max_agents=10, idle_seconds=100, clock=clock)
    old, fresh = Closable("s1"), Closable("s2")
    cache.put("a", old, "default")
    clock.now = 60
    cache.put("b", fresh, "default")
    clock.now = 120
    assert cache.evict() == ["a"]
    assert old.closed and not fresh.closed and cache.keys() == ["b"]


def test_the_cap_evicts_the_least_recently_used() -> None:
    clock = FakeClock()
    cache = AgentCache(max_agents=2, idle_seconds=1000, clock=clock)
    agents = {k: Closable(k) for k in "abc"}
    cache.put("a", agents["a"], "p")
    clock.now = 1
    cache.put("b", agents["b"], "p")
    clock.now = 2
    assert cache.get("a") is not None  # a is now more recent than b
    clock.now = 3
    cache.put("c", agents["c"], "p")
    assert cache.keys() == ["a", "c"] and agents["b"].closed


def test_a_running_agent_is_never_evicted() -> None:
    clock = FakeClock()
    cache = AgentCache(max_agents=1, idle_seconds=10, clock=clock)
    busy, other = Closable("s1"), Closable("s2")
    cache.put("busy", busy, "p")
    cache.pin("busy")
    cache.put("other", other, "p")  # over the cap, but the pinned one stays
    assert "busy" in cache and not busy.closed and other.closed
    clock.now = 1000
    assert cache.evict() == [] and not busy.closed
    assert not cache.discard("busy")
    cache.unpin("busy")
    clock.now = 2000
    assert cache.evict() == ["busy"] and busy.closed


async def test_an_evicted_session_is_rebuilt_from_the_store(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway({"max_agents": 1, "allowed_users": {"loopback": ["*"]}})
    first = await chat.inject("hello", chat_id="a")
    await chat.inject("hello", chat_id="b")
    assert len(runner.cache) == 1  # a's agent was dropped
    again = await chat.inject("me again", chat_id="a")
    assert again.session_id == first.session_id
    assert len(fake_llm.model_requests()[-1].messages) >= 4  # its history came back


async def test_every_sub_agent_keeps_its_own_line_in_the_status_message() -> None:
    chat = LoopbackAdapter()
    line = StatusLine(chat, "c", None, interval=0)
    line.update("running delegate_task: three checks")
    line.update("sub-agent 1 [running 2s] lint the repo · terminal · 1 tool call")
    line.update("sub-agent 2 [running 2s] run the tests · 0 tool calls")
    line.update("sub-agent 1 [done 5s] lint the repo · 3 tool calls")
    line.update("sub-agent 3 [running 1s] check the docs · read_file · 2 tool calls")
    await chat.wait_for(lambda a: bool(a.sent) and "sub-agent 3" in a.sent[0].text, timeout=2)
    lines = chat.sent[0].text.splitlines()
    assert lines == [
        "⚙ running delegate_task: three checks",
        "  sub-agent 1 [done 5s] lint the repo · 3 tool calls",  # updated in place
        "  sub-agent 2 [running 2s] run the tests · 0 tool calls",
        "  sub-agent 3 [running 1s] check the docs · read_file · 2 tool calls",
    ]
    line.update("running terminal: make")  # the parent's next step: the children's lines stay
    await chat.wait_for(lambda a: "make" in a.sent[0].text, timeout=2)
    assert chat.sent[0].text.splitlines()[0] == "⚙ running terminal: make"
    assert len(chat.sent[0].text.splitlines()) == 4


def test_a_childs_own_status_line_is_recognised_as_that_child() -> None:
    from herald.delegation.board import ChildRecord, child_of

    record = ChildRecord(id="2", index=1, goal="run the tests", parent_session_id="s")
    assert child_of(record.line()) == record.label == "sub-agent 2"
    assert child_of("running terminal: make") is None
