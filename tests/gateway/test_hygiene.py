"""Session hygiene: a session that is too big is compressed before the turn; a failing
compression starts a persisted cool-down ladder."""

from __future__ import annotations

from typing import Any

import pytest

from herald.context import ContextEngine, register_engine
from herald.engine.hygiene import META_KEY, next_state
from herald.gateway.contracts import MessageEvent
from herald.gateway.runner import GatewayRunner
from herald.gateway.session_keys import build_session_key
from herald.state import StateStore


class BrokenEngine(ContextEngine):
    """A context engine whose compression always fails (a broken summarizer)."""

    name = "gateway-test-broken"
    calls = 0

    def __init__(self, context_window: int):
        self.context_window = context_window

    def update_from_response(self, usage: Any) -> None:
        pass

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return False

    def compress(self, messages, *, focus=None, force=False):  # type: ignore[no-untyped-def]
        BrokenEngine.calls += 1
        raise RuntimeError("the summarizer is down")


register_engine(BrokenEngine.name, BrokenEngine)


def _seed(store: StateStore, count: int, chars: int) -> str:
    sid = store.create_session(profile="default", source="loopback", title="old chat")
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        store.append_message(
            sid, {"role": role, "content": f"message {i} " + "lorem " * (chars // 6)}
        )
    return sid


def _bind(runner: GatewayRunner, sid: str, chat_id: str = "chat-1") -> None:
    key = build_session_key("default", MessageEvent("loopback", chat_id, "user-1", ""))
    runner.state.bind_session(key, "default", sid)


def test_the_cooldown_ladder_climbs_and_stays_on_its_last_step() -> None:
    ladder = [10.0, 100.0]
    state = next_state({}, ladder, 1000.0)
    assert state == {"failures": 1, "until": 1010.0, "last_failure": 1000.0}
    state = next_state({META_KEY: state}, ladder, 2000.0)
    assert state["until"] == 2100.0
    state = next_state({META_KEY: state}, ladder, 3000.0)
    assert state["failures"] == 3 and state["until"] == 3100.0


async def test_a_session_near_the_window_is_compressed_before_the_turn(
    start_gateway, fake_llm
) -> None:
    runner, chat = await start_gateway(extra={"model": {"context_length": 4000}})
    store = runner.store_for("default")
    sid = _seed(store, 20, 800)  # ~4,500 tokens: above 85 % of 4,000
    _bind(runner, sid)
    result = await chat.inject("and now a new question")
    assert result.status == "replied" and result.session_id == sid
    status = next(m for m in chat.sent if m.history[0].startswith("⚙"))
    assert status.history[0] == "⚙ compressing a long conversation first"
    archived = store.count_messages(sid, include_inactive=True) - store.count_messages(sid)
    assert archived > 0
    record = store.get_session(sid)
    assert record is not None and META_KEY not in record.meta


async def test_an_absurd_message_count_is_compressed_too(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway({"hygiene": {"max_messages": 10}})
    store = runner.store_for("default")
    sid = _seed(store, 30, 10)
    _bind(runner, sid)
    await chat.inject("hello")
    assert store.count_messages(sid) < 30


async def test_a_failing_compression_cools_down_and_the_cooldown_persists(
    start_gateway, gateway_settings, fake_llm
) -> None:
    BrokenEngine.calls = 0
    config = {"hygiene": {"max_messages": 4, "cooldown_seconds": [3600]}}
    runner, chat = await start_gateway(config, extra={"context": {"engine": BrokenEngine.name}})
    store = runner.store_for("default")
    sid = _seed(store, 10, 10)
    _bind(runner, sid)
    first = await chat.inject("one")
    assert first.status == "replied"  # the turn still runs
    assert BrokenEngine.calls == 1
    state = (store.get_session(sid) or pytest.fail("no session")).meta[META_KEY]
    assert state["failures"] == 1 and state["until"] > state["last_failure"] + 3000
    await chat.inject("two")
    assert BrokenEngine.calls == 1  # cooling down: not retried on every message
    settings = runner.settings
    await runner.shutdown(0)
    again = GatewayRunner({"default": settings}, [chat])
    await chat.connect(again)
    try:
        await chat.inject("three")
    finally:
        await again.shutdown(0)
    assert BrokenEngine.calls == 1  # not even after a restart
