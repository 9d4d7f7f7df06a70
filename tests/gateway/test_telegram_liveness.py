"""The Telegram adapter's own long poll: every update recorded before it is confirmed,
replays dropped, each returned poll counted as a sign of life, failures reported.
The real python-telegram-bot client against the fake Bot API in fault modes."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("telegram")

from test_telegram_support import ALICE, RecordingSink, connected

from herald.testing.fake_telegram import FakeTelegramServer


class LedgerSink(RecordingSink):
    """A sink with an inbound ledger: remembers which update ids it was asked about,
    and whether the adapter had confirmed them to Telegram by then."""

    def __init__(self, server: FakeTelegramServer) -> None:
        super().__init__()
        self.server = server
        self.recorded: list[tuple[str, str, bool]] = []
        self.taken: set[str] = set()

    def record_inbound(self, platform: str, event_id: str) -> str:
        confirmed = not any(
            str(u["update_id"]) == event_id for u in self.server.state.updates
        ) and not any(str(u["update_id"]) == event_id for u in self.server.state.replays)
        self.recorded.append((platform, event_id, confirmed))
        if event_id in self.taken:
            return "seen"
        self.taken.add(event_id)
        return "new"


@pytest.fixture
def telegram() -> FakeTelegramServer:
    with FakeTelegramServer() as server:
        yield server


async def test_updates_are_recorded_before_they_are_confirmed_and_replays_dropped(
    telegram: FakeTelegramServer,
) -> None:
    sink = LedgerSink(telegram)
    async with connected(telegram, sink, poll_timeout=1):
        telegram.send_user_message(ALICE, ALICE, "first")
        (event,) = await sink.wait_for(1)
        update_id = telegram.replay_update()
        await telegram.await_replays_taken()
        telegram.send_user_message(ALICE, ALICE, "second")
        await sink.wait_for_text("second")
    assert event.event_id == str(update_id)
    assert [e.text for e in sink.events] == ["first", "second"]  # the replay was dropped
    ids = [r[1] for r in sink.recorded]
    assert ids.count(str(update_id)) == 2
    assert not any(confirmed for _, _, confirmed in sink.recorded[:1])  # before the offset


async def test_every_returned_poll_is_a_sign_of_life_and_failures_are_reported(
    telegram: FakeTelegramServer,
) -> None:
    sink = RecordingSink()
    async with connected(telegram, sink, poll_timeout=1, poll_backoff=0.05) as adapter:
        await telegram.await_until(lambda: adapter.health.assess().state == "ok", 10, "ok")
        telegram.error_storm(502, methods=("getUpdates",))
        await telegram.await_until(
            lambda: adapter.health.assess().state in ("degraded", "down"), 10, "degraded"
        )
        health = adapter.health.assess()
        assert "502" in (health.last_error or "") or "Bad Gateway" in (health.last_error or "")
        telegram.end_storm()
        await telegram.await_until(lambda: adapter.health.assess().state == "ok", 10, "recovery")
        telegram.send_user_message(ALICE, ALICE, "after the storm")
        await sink.wait_for_text("after the storm")


async def test_reconnect_replaces_the_poll_without_touching_a_dispatch_in_flight(
    telegram: FakeTelegramServer,
) -> None:
    release = asyncio.Event()

    async def slow_reply(event, adapter) -> None:  # type: ignore[no-untyped-def]
        await release.wait()
        await adapter.send(event.chat_id, f"answer to {event.text}")

    sink = RecordingSink(slow_reply)
    async with connected(telegram, sink, poll_timeout=1) as adapter:
        telegram.send_user_message(ALICE, ALICE, "in flight")
        await sink.wait_for(1)
        await adapter.reconnect(sink)
        release.set()
        await telegram.await_messages(ALICE, 1)
        telegram.send_user_message(ALICE, ALICE, "after")
        await sink.wait_for_text("after")
    assert telegram.sent_messages(ALICE)[0].text == "answer to in flight"
    assert adapter.health.assess().reconnects == 1
