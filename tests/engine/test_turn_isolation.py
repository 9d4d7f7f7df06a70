"""Two turns on one agent never see each other's callbacks, humans, stop or steer.

Each turn's `TurnHandle` owns its cancel event and steer queue, and the callbacks
and `Humans` passed to `start_turn` reach that turn's tools only.
"""

from __future__ import annotations

import json

from herald.engine import ExitReason, Humans, TurnCallbacks
from herald.testing.fake_llm import Reply

CLARIFY = Reply.tool_call("clarify", {"question": "Which one?", "choices": ["a", "b"]})


def _tool_results(request) -> list[str]:
    return [str(m["content"]) for m in request.messages if m["role"] == "tool"]


def test_each_turn_gets_its_own_callbacks_and_humans(make_agent, fake_llm):
    fake_llm.enqueue(CLARIFY, Reply.text("first done"), CLARIFY, Reply.text("second done"))
    agent = make_agent()
    seen_a: list[str] = []
    seen_b: list[str] = []
    asked_a: list[str] = []
    asked_b: list[str] = []

    def answer(log: list[str], reply: str):
        def clarify(question: str, choices):
            log.append(question)
            return reply

        return clarify

    first = agent.start_turn(
        "first",
        callbacks=TurnCallbacks(on_tool_start=lambda name, _a: seen_a.append(name)),
        humans=Humans(clarify=answer(asked_a, "a")),
    )
    assert first.result(timeout=30).final_text == "first done"
    second = agent.start_turn(
        "second",
        callbacks=TurnCallbacks(on_tool_start=lambda name, _a: seen_b.append(name)),
        humans=Humans(clarify=answer(asked_b, "b")),
    )
    assert second.result(timeout=30).final_text == "second done"
    assert seen_a == ["clarify"] and seen_b == ["clarify"]
    assert asked_a == ["Which one?"] and asked_b == ["Which one?"]
    requests = fake_llm.model_requests()
    assert '"answer": "a"' in _tool_results(requests[1])[-1]
    assert '"answer": "b"' in _tool_results(requests[3])[-1]


def test_a_turn_without_humans_is_unattended_even_after_an_attended_one(make_agent, fake_llm):
    fake_llm.enqueue(CLARIFY, Reply.text("asked"), CLARIFY, Reply.text("nobody there"))
    agent = make_agent()
    asked: list[str] = []
    attended = agent.start_turn("one", humans=Humans(clarify=lambda q, _c: asked.append(q) or "a"))
    attended.result(timeout=30)
    unattended = agent.start_turn("two")
    assert unattended.result(timeout=30).final_text == "nobody there"
    assert asked == ["Which one?"]  # the second turn never reached the first turn's human
    last = _tool_results(fake_llm.model_requests()[-1])[-1]
    assert '"answer": "a"' not in last


def test_interrupting_turn_n_while_it_runs_never_stops_turn_n_plus_1(make_agent, fake_llm):
    fake_llm.enqueue(
        Reply.tool_call("todo", {"todos": []}),
        Reply.tool_call("todo", {"todos": []}),
        Reply.text("second turn done"),
    )
    agent = make_agent()
    holder: list = []
    first = agent.start_turn(
        "first", callbacks=TurnCallbacks(on_tool_end=lambda *_: holder[0].interrupt())
    )
    holder.append(first)
    assert first.result(timeout=30).exit_reason is ExitReason.INTERRUPTED_BY_USER
    first.interrupt()  # and once more, after it ended
    second = agent.start_turn("second")
    assert second.result(timeout=30).exit_reason is ExitReason.TEXT_RESPONSE
    assert not second.cancelled


def test_steer_after_a_turn_ended_is_refused_not_lost(make_agent, fake_llm):
    fake_llm.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("done"), Reply.text("2"))
    agent = make_agent()
    holder: list = []
    first = agent.start_turn(
        "first", callbacks=TurnCallbacks(on_tool_start=lambda *_: holder[0].steer("use b"))
    )
    holder.append(first)
    assert first.result(timeout=30).final_text == "done"
    assert "use b" in _tool_results(fake_llm.model_requests()[1])[-1]
    assert first.steer("too late") is False  # the caller sends it as a message instead
    second = agent.start_turn("second")
    result = second.result(timeout=30)
    assert result.leftover_steer is None
    assert "too late" not in json.dumps(fake_llm.model_requests()[-1].messages)


def test_compress_notices_go_to_that_call_only(make_agent, fake_llm):
    """The gateway's /compress used to leave its callbacks on the agent."""

    def handler(req):
        if req.system and req.system.startswith("You compress the history"):
            return Reply.text("## Goal\nsummary")
        if req.messages[-1]["role"] == "user" and req.tools:
            return Reply.tool_call("todo", {"todos": [{"id": "1", "content": "w" * 1500}]})
        return Reply.text("done")

    fake_llm.set_handler(handler)
    agent = make_agent()
    for i in range(4):
        agent.run_turn(f"step {i}")
    notes: list[str] = []
    assert agent.compress_now(callbacks=TurnCallbacks(on_status=notes.append))
    assert any("compressed" in n for n in notes)
    later: list[str] = []
    agent.start_turn("after", callbacks=TurnCallbacks(on_status=later.append)).result(timeout=30)
    assert all("compressed" not in n for n in later)
    assert agent.callbacks.on_status is None  # nothing was installed on the agent


def test_reading_the_tool_definitions_changes_nothing(make_agent, fake_llm):
    agent = make_agent(enabled_tools=("todo",))
    before = agent.enabled_tools
    definitions = agent.tool_definitions()
    assert definitions is not None
    definitions.clear()
    assert agent.enabled_tools == before == ("todo",)
    assert [d["function"]["name"] for d in agent.tool_definitions()] == ["todo"]
