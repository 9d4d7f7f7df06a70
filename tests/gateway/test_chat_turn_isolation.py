"""In a chat, one message's turn never reaches the next: not its stop, not its
callbacks (the `/compress` notices used to stay installed on the agent)."""

from __future__ import annotations

import asyncio

from herald.engine import TurnCallbacks
from herald.testing.fake_llm import Reply


async def test_a_stop_of_one_turn_never_stops_the_next(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 30"}), Reply.text("answer two"))
    turn = chat.inject_soon("run the long job")
    await chat.wait_for_text("running terminal: sleep 30")
    await chat.inject("/stop")
    assert (await asyncio.wait_for(turn, 10)).exit_reason == "interrupted_by_user"
    second = await chat.inject("and now a question")
    assert second.exit_reason == "text_response"
    assert second.text == "answer two"


async def test_compress_leaves_no_callbacks_on_the_agent(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway()
    fake_llm.default_reply = Reply.text("ok")
    await chat.inject("hello")
    await chat.inject("/compress")
    after = await chat.inject("still there?")
    assert after.exit_reason == "text_response"
    (key,) = runner.cache.keys()
    agent = runner.cache.get(key).agent
    assert agent.callbacks == TurnCallbacks()  # every turn's callbacks were its own
