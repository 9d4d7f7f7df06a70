"""The Telegram adapter with the real python-telegram-bot client against the fake Bot API
server: what arrives as `MessageEvent`s, and how replies, buttons, edits and typing
indicators leave."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

pytest.importorskip("telegram")

from test_telegram_support import ALICE, BOB, CAROL, FORUM, GROUP, RecordingSink, connected

from herald.gateway import Button, MessageEvent, PlatformAdapter
from herald.gateway.platforms.telegram.adapter import TelegramAdapter
from herald.testing.fake_telegram import FakeTelegramServer


@pytest.fixture
def server() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as fake:
        yield fake


# ---- receiving ------------------------------------------------------------------------------


async def test_a_direct_message_arrives_as_a_private_event(server: FakeTelegramServer) -> None:
    sink = RecordingSink()
    async with connected(server, sink) as adapter:
        sent_id = server.send_user_message(ALICE, ALICE, "hello there", username="alice")
        [event] = await sink.wait_for(1)
    assert adapter.bot_username == server.bot_username
    assert (event.platform, event.chat_id, event.user_id) == ("telegram", str(ALICE), str(ALICE))
    assert (event.text, event.chat_type, event.thread_id) == ("hello there", "private", None)
    assert event.message_id == str(sent_id)
    assert event.user_name == "alice"
    assert event.reply_to is None and event.media == ()


async def test_group_messages_are_group_events_with_their_sender_and_reply(
    server: FakeTelegramServer,
) -> None:
    sink = RecordingSink()
    async with connected(server, sink):
        first = server.send_user_message(GROUP, BOB, "who is here?", "group", username="bob")
        server.send_user_message(GROUP, CAROL, "me", "group", reply_to=first, first_name="Carol")
        bob_event, carol_event = await sink.wait_for(2)
    assert (bob_event.chat_id, bob_event.chat_type, bob_event.user_id) == (
        str(GROUP),
        "group",
        str(BOB),
    )
    assert carol_event.reply_to == str(first)
    # No @username: nothing to match an allowlist on (a display name is not an identity).
    assert carol_event.user_name is None


async def test_forum_topics_become_threads(server: FakeTelegramServer) -> None:
    sink = RecordingSink()
    async with connected(server, sink):
        server.send_user_message(FORUM, BOB, "in a topic", "supergroup", thread_id=77)
        server.send_user_message(FORUM, BOB, "general chat", "supergroup")
        topic, general = await sink.wait_for(2)
    assert (topic.chat_type, topic.thread_id) == ("group", "77")
    assert (general.chat_type, general.thread_id) == ("group", None)


async def test_commands_pass_through_as_text_and_other_bots_commands_are_ignored(
    server: FakeTelegramServer,
) -> None:
    sink = RecordingSink()
    async with connected(server, sink):
        server.send_user_message(GROUP, BOB, "/help@some_other_bot", "group")
        server.send_user_message(GROUP, BOB, f"/stop@{server.bot_username}", "group")
        server.send_user_message(ALICE, ALICE, "/approve session")
        events = await sink.wait_for(2)  # handled in order: the first was seen and dropped
    assert [e.text for e in events] == [f"/stop@{server.bot_username}", "/approve session"]
    assert all(e.is_command for e in events)


async def test_start_which_telegram_sends_on_opening_the_bot_asks_for_help(
    server: FakeTelegramServer,
) -> None:
    sink = RecordingSink()
    async with connected(server, sink):
        server.send_user_message(ALICE, ALICE, "/start")
        server.send_user_message(ALICE, ALICE, "/start@herald_test_bot deep-link-payload")
        events = await sink.wait_for(2)
    assert [e.text for e in events] == ["/help", "/help"]


async def test_edited_messages_are_ignored(server: FakeTelegramServer) -> None:
    sink = RecordingSink()
    async with connected(server, sink):
        original = server.send_user_message(ALICE, ALICE, "first version")
        await sink.wait_for(1)
        server.edit_user_message(ALICE, original, "second version")
        server.send_user_message(ALICE, ALICE, "next message")
        await sink.wait_for_text("next message")
    assert [e.text for e in sink.events] == ["first version", "next message"]


async def test_attachments_are_noted_not_downloaded(server: FakeTelegramServer) -> None:
    sink = RecordingSink()
    async with connected(server, sink):
        server.send_user_message(ALICE, ALICE, "look at this", photo=(1280, 960))
        server.send_user_message(ALICE, ALICE, "", document=("report.pdf", "application/pdf", 2048))
        photo, document = await sink.wait_for(2)
    assert (photo.text, photo.media) == ("look at this", ("photo 1280x960",))
    assert (document.text, document.media) == (
        "",
        ("document report.pdf (application/pdf, 2048 bytes)",),
    )
    assert not any(call.method.lower() == "getfile" for call in server.calls)


async def test_messages_sent_while_down_are_delivered_once(server: FakeTelegramServer) -> None:
    server.send_user_message(ALICE, ALICE, "sent while Herald was offline")
    first = RecordingSink()
    async with connected(server, first):
        await first.wait_for(1)
    assert server.pending_updates == 0  # the stop confirmed what was fetched
    second = RecordingSink()
    async with connected(server, second):
        server.send_user_message(ALICE, ALICE, "after the restart")
        await second.wait_for_text("after the restart")
    assert [e.text for e in second.events] == ["after the restart"]


async def test_stopping_right_after_a_message_still_confirms_it(
    server: FakeTelegramServer,
) -> None:
    for round_ in range(3):
        sink = RecordingSink()
        server.send_user_message(ALICE, ALICE, f"message {round_}")
        async with connected(server, sink):
            await sink.wait_for(1)  # the next long poll is just being sent
        assert server.pending_updates == 0, f"round {round_}: the update would come again"
        assert [e.text for e in sink.events] == [f"message {round_}"]


async def test_a_slow_chat_does_not_hold_up_another(server: FakeTelegramServer) -> None:
    release = asyncio.Event()

    async def respond(event: MessageEvent, adapter: PlatformAdapter) -> None:
        if event.chat_id == str(ALICE):
            await release.wait()  # a long turn in Alice's chat
        await adapter.send(event.chat_id, f"done: {event.text}")

    sink = RecordingSink(respond)
    async with connected(server, sink):
        server.send_user_message(ALICE, ALICE, "slow job")
        server.send_user_message(BOB, BOB, "quick question")
        [reply] = await server.await_messages(BOB, 1)
        assert reply.text == "done: quick question"
        assert server.sent_messages(ALICE) == []
        release.set()
        [slow] = await server.await_messages(ALICE, 1)
    assert slow.text == "done: slow job"


# ---- sending --------------------------------------------------------------------------------


async def test_capabilities(server: FakeTelegramServer) -> None:
    adapter = TelegramAdapter(server.token, base_url=server.base_url)
    assert adapter.max_message_length(str(ALICE)) == 4096
    assert adapter.supports_edits() and adapter.supports_buttons() and adapter.supports_threads()
    assert adapter.push_replies is True
    assert adapter.measure("abc") == 3
    assert adapter.measure("😀") == 2  # outside the BMP: two UTF-16 code units
    assert adapter.measure("é") == 1


async def test_send_replies_in_the_right_topic_as_html(server: FakeTelegramServer) -> None:
    sink = RecordingSink()
    async with connected(server, sink) as adapter:
        asked = server.send_user_message(FORUM, BOB, "status?", "supergroup", thread_id=77)
        await sink.wait_for(1)
        result = await adapter.send(
            str(FORUM), "**All good** & `x < y`", reply_to=str(asked), thread_id="77"
        )
    assert result.ok and not result.permanent_failure
    [message] = server.sent_messages(FORUM)
    assert result.message_ids == [str(message.message_id)]
    assert (message.reply_to_message_id, message.message_thread_id) == (asked, 77)
    assert message.parse_mode == "HTML"
    assert message.raw_text == "<b>All good</b> &amp; <code>x &lt; y</code>"
    assert message.text == "All good & x < y"


async def test_markup_telegram_refuses_is_sent_again_as_plain_text(
    server: FakeTelegramServer,
) -> None:
    server.add_chat(ALICE)
    server.fail_next(
        "sendMessage", 400, 'Bad Request: can\'t parse entities: Unsupported start tag "x"'
    )
    async with connected(server, RecordingSink()) as adapter:
        result = await adapter.send(str(ALICE), "**bold** <x>")
    assert result.ok
    [message] = server.sent_messages(ALICE)
    assert (message.parse_mode, message.text) == (None, "**bold** <x>")


async def test_buttons_become_an_inline_keyboard_and_a_press_becomes_text(
    server: FakeTelegramServer,
) -> None:
    sink = RecordingSink()
    async with connected(server, sink) as adapter:
        server.send_user_message(GROUP, BOB, "run it", "group", username="bob")
        await sink.wait_for(1)
        buttons = [[Button("Approve", "/approve session"), Button("Deny", "/deny")]]
        result = await adapter.send(str(GROUP), "Allow `rm build/`?", buttons=buttons)
        [prompt] = server.sent_messages(GROUP)
        assert [[(b.text, b.callback_data) for b in row] for row in prompt.buttons] == [
            [("Approve", "/approve session"), ("Deny", "/deny")]
        ]
        query_id = server.press_button(GROUP, CAROL, prompt.message_id, "/approve session")
        events = await sink.wait_for(2)
        await server.await_until(lambda: server.callback_answers, what="for the answer")
    assert result.message_ids == [str(prompt.message_id)]
    pressed = events[1]
    assert (pressed.text, pressed.chat_id, pressed.user_id) == (
        "/approve session",
        str(GROUP),
        str(CAROL),
    )
    assert (pressed.chat_type, pressed.reply_to, pressed.message_id) == (
        "group",
        str(prompt.message_id),
        None,
    )
    assert [a.callback_query_id for a in server.callback_answers] == [query_id]


async def test_button_data_longer_than_telegram_allows_still_round_trips(
    server: FakeTelegramServer,
) -> None:
    long_data = "/approve session " + "x" * 80
    sink = RecordingSink()
    server.add_chat(ALICE)
    async with connected(server, sink) as adapter:
        await adapter.send(str(ALICE), "choose", buttons=[[Button("Go", long_data)]])
        [prompt] = server.sent_messages(ALICE)
        [[button]] = prompt.buttons
        assert button.callback_data is not None
        assert len(button.callback_data.encode()) <= 64
        server.press_button(ALICE, ALICE, prompt.message_id, button.callback_data)
        [event] = await sink.wait_for(1)
    assert event.text == long_data


async def test_edit_replaces_text_and_drops_the_keyboard(server: FakeTelegramServer) -> None:
    server.add_chat(ALICE)
    async with connected(server, RecordingSink()) as adapter:
        sent = await adapter.send(str(ALICE), "Approve?", buttons=[[Button("Yes", "/approve")]])
        message_id = sent.message_ids[0]
        edited = await adapter.edit(str(ALICE), message_id, "✅ approved by **alice**")
        unchanged = await adapter.edit(str(ALICE), message_id, "✅ approved by **alice**")
        missing = await adapter.edit(str(ALICE), "999", "nothing here")
    assert edited.ok and edited.message_ids == [message_id]
    assert unchanged.ok  # "message is not modified" is not a failure
    assert not missing.ok and not missing.permanent_failure
    [record] = server.edits
    assert (record.message_id, record.text, record.reply_markup) == (
        int(message_id),
        "✅ approved by alice",
        None,
    )
    assert server.sent_messages(ALICE)[0].buttons == []


async def test_typing_indicator_goes_to_the_topic(server: FakeTelegramServer) -> None:
    sink = RecordingSink()
    async with connected(server, sink) as adapter:
        server.send_user_message(FORUM, BOB, "hi", "supergroup", thread_id=9)
        await sink.wait_for(1)
        await adapter.typing(str(FORUM), "9")
        await adapter.typing(str(ALICE))  # unknown chat: best effort, no exception
    [action] = server.chat_actions
    assert (action.chat_id, action.action, action.message_thread_id) == (FORUM, "typing", 9)


async def test_the_command_menu_is_registered(server: FakeTelegramServer) -> None:
    async with connected(server, RecordingSink()):
        pass
    names = [c["command"] for c in server.commands]
    assert {"stop", "approve", "deny", "new", "help"} <= set(names)
    assert "exit" not in names  # a CLI-only command


async def test_sending_when_not_connected_is_a_clear_failure(server: FakeTelegramServer) -> None:
    adapter = TelegramAdapter(server.token, base_url=server.base_url)
    result = await adapter.send(str(ALICE), "hello")
    assert not result.ok and "not connected" in (result.error or "")


async def test_after_a_burst_of_sends_few_idle_connections_stay_open(
    server: FakeTelegramServer,
) -> None:
    """A burst (many chats answered at once) opens a connection per send; once it is
    over, the client keeps a few for the next ones and closes the rest, so a gateway
    that has been busy once does not hold dozens of sockets for the rest of its life."""
    chats = [9000 + i for i in range(40)]
    for chat in chats:
        server.add_chat(chat)
    async with connected(server, RecordingSink()) as adapter:
        server.answer_after(0.3)  # the sends are in flight together
        sending = asyncio.gather(*(adapter.send(str(c), f"hi {c}") for c in chats))
        burst = 0
        while not sending.done():
            burst = max(burst, server.open_connections)
            await asyncio.sleep(0.02)
        assert all(r.ok for r in await sending)
        await asyncio.sleep(0.5)  # the server sees closed connections go
        settled = server.open_connections
    assert burst >= 40, f"the sends did not overlap ({burst} connections); the test proves nothing"
    # the idle sends kept (8) and the long polls (2)
    assert settled <= 10, f"{settled} connections stay open after the burst"
