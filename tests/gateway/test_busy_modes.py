"""A message that arrives while its session runs a turn: interrupt (default), steer, queue."""

from __future__ import annotations

import asyncio

import pytest

from herald.gateway.pipeline import busy_action
from herald.gateway.testing import LoopbackAdapter
from herald.testing.fake_llm import Reply


@pytest.mark.parametrize(
    ("mode", "phase", "push", "expected"),
    [
        ("interrupt", "model", True, "steer"),
        ("interrupt", "tool", True, "interrupt"),
        ("interrupt", "approval", True, "interrupt"),
        ("interrupt", "preparing", True, "queue"),
        ("interrupt", None, True, "queue"),
        ("steer", "tool", True, "steer"),
        ("steer", "model", True, "steer"),
        ("queue", "tool", True, "queue"),
        ("interrupt", "model", False, "interrupt"),
        ("steer", "tool", False, "queue"),
    ],
)
def test_busy_action_table(mode: str, phase: str | None, push: bool, expected: str) -> None:
    assert busy_action(mode, phase, push=push) == expected


async def test_interrupt_stops_a_running_tool_and_answers_the_new_message(
    start_gateway, fake_llm
) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "sleep 30"}), Reply.text("answer to the second")
    )
    first = chat.inject_soon("long job")
    await chat.wait_for_text("running terminal")
    second = await chat.inject("never mind, do this instead")
    assert second.status == "interrupted"
    old = await asyncio.wait_for(first, 10)
    assert old.exit_reason == "interrupted_by_user"
    await chat.wait_for_text("answer to the second")
    assert fake_llm.model_requests()[-1].last_user_text == "never mind, do this instead"


async def test_interrupt_redirects_a_turn_waiting_on_the_model(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(Reply.text("first answer", delay=1.0), Reply.text("second answer"))
    first = chat.inject_soon("question one")
    await asyncio.sleep(0.4)  # the model is thinking
    second = await chat.inject("question two")
    assert second.status == "steered"
    assert (await asyncio.wait_for(first, 10)).text == "first answer"
    # the model answered without another tool round, so the text runs as the next turn
    await chat.wait_for_text("second answer")
    assert "question two" in (fake_llm.model_requests()[-1].last_user_text or "")


async def test_steer_mode_delivers_the_text_on_the_next_tool_result(
    start_gateway, fake_llm
) -> None:
    _runner, chat = await start_gateway({"busy_mode": "steer"})
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 1"}), Reply.text("steered"))
    first = chat.inject_soon("job")
    await chat.wait_for_text("running terminal")
    result = await chat.inject("also check the logs")
    assert result.status == "steered"
    assert (await asyncio.wait_for(first, 10)).text == "steered"
    tool_message = fake_llm.model_requests()[-1].messages[-1]
    assert tool_message["role"] == "tool" and "also check the logs" in str(tool_message["content"])
    assert len(fake_llm.model_requests()) == 2


async def test_queue_mode_runs_messages_in_order(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway({"busy_mode": "queue"})
    fake_llm.enqueue(Reply.text("one", delay=0.6), Reply.text("two"), Reply.text("three"))
    first = chat.inject_soon("1")
    await asyncio.sleep(0.2)
    assert (await chat.inject("2")).status == "queued"
    assert (await chat.inject("3")).status == "queued"
    await asyncio.wait_for(first, 10)
    await chat.wait_for_text("three")
    answers = [t for t in chat.texts() if t in ("one", "two", "three")]
    assert answers == ["one", "two", "three"]
    asked = [r.last_user_text for r in fake_llm.model_requests()]
    assert asked == ["1", "2", "3"]


async def test_a_request_response_caller_waits_for_its_own_answer(start_gateway, fake_llm) -> None:
    api = LoopbackAdapter("api-like", push=False)
    _runner, _ = await start_gateway(
        {"busy_mode": "steer", "allowed_users": {"api-like": ["*"]}}, adapter=api
    )
    fake_llm.enqueue(Reply.text("first", delay=0.5), Reply.text("second"))
    one = api.inject_soon("a", session_hint="s1")
    await asyncio.sleep(0.2)
    two = await api.inject("b", session_hint="s1")
    assert two.status == "replied" and two.text == "second"
    assert (await one).text == "first"
