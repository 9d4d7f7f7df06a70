"""`Agent.start_turn`: the handle waits for, interrupts and steers its own turn only."""

from __future__ import annotations

from herald.engine import ExitReason, Humans, TurnCallbacks
from herald.testing.fake_llm import Reply


def test_start_turn_returns_a_handle_with_the_result(make_agent, fake_llm):
    fake_llm.enqueue(Reply.text("Hello there."))
    agent = make_agent()
    deltas: list[str] = []
    handle = agent.start_turn("Say hello", callbacks=TurnCallbacks(on_text_delta=deltas.append))
    result = handle.result(timeout=30)
    assert handle.done
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    assert result.final_text == "Hello there."


def test_interrupting_a_finished_turn_never_stops_the_next(make_agent, fake_llm):
    fake_llm.enqueue(Reply.text("one"), Reply.text("two"))
    agent = make_agent()
    first = agent.start_turn("first", humans=Humans())
    assert first.result(timeout=30).final_text == "one"
    first.interrupt()  # too late: turn 1 has ended
    second = agent.start_turn("second")
    assert second.result(timeout=30).exit_reason is ExitReason.TEXT_RESPONSE
    assert second.result().final_text == "two"
