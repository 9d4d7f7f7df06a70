"""How Telegram's refusals reach the runner: message length in UTF-16, chats that are gone
for good, flood control, topics and groups that moved, and the network going away."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("telegram")

from test_telegram_support import ALICE, BOB, FORUM, GROUP, RecordingSink, connected

from herald.gateway.splitting import split_message
from herald.testing.fake_telegram import FakeTelegramServer, utf16_length


@pytest.fixture(autouse=True)
def _timedelta_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    """python-telegram-bot's RetryAfter warns about its int-to-timedelta migration unless
    opted in; the adapter reads both forms."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture
def server() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as fake:
        fake.add_chat(ALICE)
        yield fake


def _send_calls(server: FakeTelegramServer) -> list[str | None]:
    """The outcome of every sendMessage call: None for success, else the error."""
    return [call.error for call in server.calls if call.method == "sendMessage"]


# ---- length -----------------------------------------------------------------------------------


async def test_telegram_refuses_an_unsplit_long_message(server: FakeTelegramServer) -> None:
    async with connected(server, RecordingSink()) as adapter:
        at_limit = await adapter.send(str(ALICE), "x" * 4096)
        too_long = await adapter.send(str(ALICE), "x" * 4097)
    assert at_limit.ok
    assert not too_long.ok and not too_long.permanent_failure
    assert "too long" in (too_long.error or "").lower()


async def test_emoji_count_double_in_the_limit(server: FakeTelegramServer) -> None:
    fits, overflows = "😀" * 2048, "😀" * 2049  # 4096 and 4098 UTF-16 code units
    async with connected(server, RecordingSink()) as adapter:
        assert adapter.measure(fits) == 4096 and len(fits) == 2048
        assert adapter.measure(overflows) == 4098
        assert (await adapter.send(str(ALICE), fits)).ok
        refused = await adapter.send(str(ALICE), overflows)
    assert not refused.ok and "too long" in (refused.error or "").lower()


async def test_a_reply_split_by_the_adapters_measure_is_accepted(
    server: FakeTelegramServer,
) -> None:
    paragraph = "Status 🚀 of the deploy: all green, **nothing** to do. " * 20
    code = "```python\n" + "print('🐍 hello')\n" * 150 + "```"
    reply = "\n\n".join([paragraph] * 6 + [code])
    async with connected(server, RecordingSink()) as adapter:
        parts = split_message(reply, adapter.max_message_length(str(ALICE)), adapter.measure)
        results = [await adapter.send(str(ALICE), part) for part in parts]
    assert len(parts) > 2 and len(reply) < 4096 * len(parts)
    assert all(result.ok for result in results)
    sent = server.sent_messages(ALICE)
    assert [m.parse_mode for m in sent] == ["HTML"] * len(parts)
    assert all(utf16_length(m.text) <= 4096 for m in sent)
    assert sent[-1].text.endswith(f"({len(parts)}/{len(parts)})")


# ---- chats that are gone ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "wording"),
    [
        ("blocked", "bot was blocked by the user"),
        ("kicked", "bot was kicked from the group chat"),
        ("deactivated", "user is deactivated"),
        ("not_found", "chat not found"),
    ],
)
async def test_chats_that_are_gone_are_permanent_failures(
    server: FakeTelegramServer, kind: str, wording: str
) -> None:
    server.fail_chat(ALICE, kind)
    async with connected(server, RecordingSink()) as adapter:
        result = await adapter.send(str(ALICE), "are you there?")
        edit = await adapter.edit(str(ALICE), "1", "changed")
        await adapter.typing(str(ALICE))  # best effort: no exception
    assert not result.ok and result.permanent_failure
    assert wording in (result.error or "").lower()
    assert edit.permanent_failure


async def test_a_chat_the_bot_never_saw_is_a_permanent_failure(
    server: FakeTelegramServer,
) -> None:
    async with connected(server, RecordingSink()) as adapter:
        result = await adapter.send("-987654321", "hello?")
        malformed = await adapter.send("not-a-chat", "hello?")
    assert result.permanent_failure and "chat not found" in (result.error or "").lower()
    assert malformed.permanent_failure


# ---- recoverable -------------------------------------------------------------------------------


async def test_flood_control_is_waited_out_once(server: FakeTelegramServer) -> None:
    server.flood("sendMessage", retry_after=1)
    async with connected(server, RecordingSink()) as adapter:
        result = await adapter.send(str(ALICE), "hello after the flood")
    assert result.ok
    assert _send_calls(server) == ["Too Many Requests: retry after 1", None]
    assert [m.text for m in server.sent_messages(ALICE)] == ["hello after the flood"]


async def test_flood_control_twice_is_reported_not_retried_forever(
    server: FakeTelegramServer,
) -> None:
    server.flood("sendMessage", retry_after=1, times=2)
    async with connected(server, RecordingSink()) as adapter:
        result = await adapter.send(str(ALICE), "hello")
    assert not result.ok and not result.permanent_failure
    assert "flood" in (result.error or "").lower() and "1" in (result.error or "")
    assert len(_send_calls(server)) == 2


async def test_a_long_flood_wait_is_reported_at_once(server: FakeTelegramServer) -> None:
    server.flood("sendMessage", retry_after=3600)
    async with connected(server, RecordingSink(), max_retry_after=30) as adapter:
        result = await adapter.send(str(ALICE), "hello")
    assert not result.ok and "3600" in (result.error or "")
    assert len(_send_calls(server)) == 1


async def test_a_dropped_connection_is_a_transient_failure(server: FakeTelegramServer) -> None:
    server.fail_next("sendMessage", drop=True)
    async with connected(server, RecordingSink()) as adapter:
        failed = await adapter.send(str(ALICE), "first try")
        retried = await adapter.send(str(ALICE), "second try")
    assert not failed.ok and not failed.permanent_failure and failed.error
    assert retried.ok


async def test_telegram_unreachable_is_a_transient_failure(server: FakeTelegramServer) -> None:
    async with connected(server, RecordingSink()) as adapter:
        server.stop()
        try:
            result = await adapter.send(str(ALICE), "anyone?")
        finally:
            server.start()  # same port, so the adapter can shut down cleanly
    assert not result.ok and not result.permanent_failure
    assert "telegram" in (result.error or "").lower()


async def test_a_deleted_topic_falls_back_to_the_chat(server: FakeTelegramServer) -> None:
    sink = RecordingSink()
    async with connected(server, sink) as adapter:
        server.send_user_message(FORUM, BOB, "hi", "supergroup", thread_id=5)
        await sink.wait_for(1)
        result = await adapter.send(str(FORUM), "reply", thread_id="404")
    assert result.ok
    [message] = server.sent_messages(FORUM)
    assert message.message_thread_id is None
    assert _send_calls(server) == ["Bad Request: message thread not found", None]


async def test_a_group_that_became_a_supergroup_is_followed(server: FakeTelegramServer) -> None:
    new_id = -1009999999999
    sink = RecordingSink()
    async with connected(server, sink) as adapter:
        server.send_user_message(GROUP, BOB, "hi", "group")
        await sink.wait_for(1)
        server.migrate_chat(GROUP, new_id)
        first = await adapter.send(str(GROUP), "one")
        second = await adapter.send(str(GROUP), "two")
    assert first.ok and second.ok
    assert [m.text for m in server.sent_messages(new_id)] == ["one", "two"]
    assert len(_send_calls(server)) == 3  # the second send went straight to the new id


def test_time_periods_are_read_in_either_form(monkeypatch: pytest.MonkeyPatch) -> None:
    from telegram.error import RetryAfter

    from herald.gateway.platforms.telegram.events import period_seconds

    assert period_seconds(RetryAfter(3), "retry_after") == 3.0
    monkeypatch.setenv("PTB_TIMEDELTA", "false")  # the int form (with the library's warning)
    with pytest.warns(DeprecationWarning):
        error = RetryAfter(5)
    assert period_seconds(error, "retry_after") == 5.0
