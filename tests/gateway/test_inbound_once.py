"""Inbound exactly once at the runner: an event recorded by its platform id is marked
started when its turn begins and done when it is answered; a second runner on the
same home (a restart) drops a replay of either, and takes again only an event the
first runner recorded but never began."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from herald.gateway.runner import GatewayRunner
from herald.testing.fake_llm import FakeLLMServer, Reply

StartGateway = Callable[..., Awaitable[Any]]  # the start_gateway fixture (conftest.py)


async def test_an_answered_event_is_seen_by_this_runner_and_the_next(
    start_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    runner, chat = await start_gateway()
    fake_llm.enqueue(Reply.text("answered"))
    assert runner.record_inbound("loopback", "ev-1") == "new"
    event = replace(chat.event("hello"), event_id="ev-1")
    result = await chat.inject(event)
    assert result.status == "replied"
    assert runner.inbound.state_of("loopback", "ev-1") == "done"
    assert runner.record_inbound("loopback", "ev-1") == "seen"

    # A restart: a new runner (a new boot) on the same state.db.
    again = GatewayRunner({"default": runner.settings}, [chat])
    try:
        assert again.record_inbound("loopback", "ev-1") == "seen"
        assert runner.record_inbound("loopback", "ev-2") == "new"  # taken, never begun
        assert again.record_inbound("loopback", "ev-2") == "new"  # so it is taken again
        assert again.record_inbound("loopback", "ev-2") == "seen"
    finally:
        again.close()


async def test_an_event_whose_turn_began_is_left_to_resume(
    start_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    runner, chat = await start_gateway()
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 30"}))
    runner.record_inbound("loopback", "ev-slow")
    task = chat.inject_soon(replace(chat.event("slow one"), event_id="ev-slow"))
    await chat.wait_for_text("sleep 30")
    assert runner.inbound.state_of("loopback", "ev-slow") == "started"
    again = GatewayRunner({"default": runner.settings}, [chat])
    try:
        assert again.record_inbound("loopback", "ev-slow") == "seen"
    finally:
        again.close()
    await chat.inject("/stop")
    await task
