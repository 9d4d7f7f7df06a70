"""The delivery ledger: every part recorded with its platform message id, no part sent
twice (also when a send times out and lands late), dead targets skipped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from herald.gateway.contracts import SendResult
from herald.gateway.delivery import Deliverer, Target
from herald.gateway.testing import LoopbackAdapter, SendScript
from herald.state import StateStore
from herald.state.gateway_tables import GatewayState

TARGET = Target("loopback", "chat-1")


@pytest.fixture
def state(tmp_path: Path):
    store = StateStore(tmp_path / "state.db")
    yield GatewayState(store)
    store.close()


async def test_parts_are_recorded_with_their_message_ids(state: GatewayState) -> None:
    chat = LoopbackAdapter(max_length=50)
    deliverer = Deliverer(state, timeout=5, retries=1, retry_delay=0)
    report = await deliverer.deliver(chat, TARGET, "word " * 40, key="k1")
    assert report.ok and report.sent == report.parts == len(chat.sent) > 1
    parts = state.delivery_parts("k1")
    assert [p.message_id for p in parts.values()] == [m.message_id for m in chat.sent]
    assert all(p.status == "sent" and p.attempts == 1 for p in parts.values())


async def test_a_slow_send_is_waited_for_not_sent_twice(state: GatewayState) -> None:
    chat = LoopbackAdapter()
    chat.script.append(SendScript(delay=0.6))
    deliverer = Deliverer(state, timeout=0.2, retries=5, retry_delay=0)
    report = await deliverer.deliver(chat, TARGET, "hello", key="k2")
    assert report.ok and chat.texts() == ["hello"]
    assert state.delivery_parts("k2")[0].attempts == 1


async def test_a_retry_after_a_timeout_consults_the_ledger(state: GatewayState) -> None:
    chat = LoopbackAdapter()
    chat.script.append(SendScript(delay=0.8))  # lands after the deliverer gave up
    deliverer = Deliverer(state, timeout=0.1, retries=1, retry_delay=0)
    first = await deliverer.deliver(chat, TARGET, "hello", key="k3")
    assert not first.ok and "in time" in (first.error or "")
    await chat.wait_for(lambda a: len(a.sent) == 1, timeout=5)
    await asyncio.sleep(0.05)  # the late success is recorded
    again = await deliverer.deliver(chat, TARGET, "hello", key="k3")
    assert again.ok and again.skipped == 1 and again.sent == 0
    assert chat.texts() == ["hello"]  # the user got it once


async def test_a_failed_send_is_retried(state: GatewayState) -> None:
    chat = LoopbackAdapter()
    chat.script.append(SendScript(result=SendResult(ok=False, error="network hiccup")))
    deliverer = Deliverer(state, timeout=5, retries=2, retry_delay=0)
    report = await deliverer.deliver(chat, TARGET, "hello", key="k4")
    assert report.ok and chat.texts() == ["hello"]
    assert state.delivery_parts("k4")[0].attempts == 2


async def test_redelivery_sends_only_the_missing_parts(state: GatewayState) -> None:
    chat = LoopbackAdapter(max_length=30)
    text = "\n\n".join(["first part here", "second part here", "third part here"])
    chat.script.extend([SendScript(), SendScript(result=SendResult(ok=False, error="boom"))])
    deliverer = Deliverer(state, timeout=5, retries=0, retry_delay=0)
    first = await deliverer.deliver(chat, TARGET, text, key="k5")
    assert not first.ok and first.sent == 1 and first.parts == 3
    second = await deliverer.deliver(chat, TARGET, text, key="k5")
    assert second.ok and second.skipped == 1 and second.sent == 2
    bodies = [t.split("\n(")[0] for t in chat.texts()]
    assert bodies == ["first part here", "second part here", "third part here"]


async def test_a_dead_target_is_marked_and_skipped(state: GatewayState) -> None:
    chat = LoopbackAdapter()
    chat.script.append(
        SendScript(result=SendResult(ok=False, permanent_failure=True, error="bot was blocked"))
    )
    deliverer = Deliverer(state, timeout=5, retries=3, retry_delay=0)
    first = await deliverer.deliver(chat, TARGET, "hello", key="k6")
    assert first.dead and state.is_dead("loopback", "chat-1")
    assert state.delivery_parts("k6")[0].status == "dead"
    later = await deliverer.deliver(chat, TARGET, "anyone there?", key="k7")
    assert later.dead and later.sent == 0 and chat.sent == []
    assert state.delivery_parts("k7") == {}  # not even attempted


async def test_a_dead_chat_that_writes_again_is_revived(start_gateway) -> None:
    runner, chat = await start_gateway()
    runner.state.mark_dead("loopback", "chat-1", "bot was removed")
    result = await chat.inject("I added the bot back")
    assert result.status == "replied"
    assert not runner.state.is_dead("loopback", "chat-1")
    assert chat.texts() == ["(fake) done"]


async def test_replies_to_a_chat_that_went_away_are_not_retried(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway()
    chat.script.append(
        SendScript(result=SendResult(ok=False, permanent_failure=True, error="chat not found"))
    )
    await chat.inject("hello", chat_id="doomed", user_id="user-1")
    assert runner.state.is_dead("loopback", "doomed")
    delivered = await runner.deliver_text("loopback", "doomed", "a notice")
    assert delivered is False and chat.sent == []
