"""The fake Bot API server itself, spoken to with plain HTTP and with the real
python-telegram-bot `Bot`: the JSON envelope, long polling and offsets, and Telegram's
own validation of what a bot sends."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from herald.testing.fake_telegram import FakeTelegramServer


@pytest.fixture(autouse=True)
def _timedelta_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    """python-telegram-bot's RetryAfter warns about its int-to-timedelta migration unless
    opted in; the adapter reads both forms."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


ALICE = 1001


@pytest.fixture
def server() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as fake:
        yield fake


def call(server: FakeTelegramServer, method: str, **params: Any) -> tuple[int, dict[str, Any]]:
    response = httpx.post(f"{server.base_url}{server.token}/{method}", json=params, timeout=10)
    return response.status_code, response.json()


def test_get_me_and_the_envelope(server: FakeTelegramServer) -> None:
    status, body = call(server, "getMe")
    assert status == 200 and body["ok"] is True
    assert body["result"]["is_bot"] is True
    assert body["result"]["username"] == server.bot_username


def test_a_wrong_token_and_an_unknown_method(server: FakeTelegramServer) -> None:
    response = httpx.post(f"{server.base_url}1:wrong/getMe", timeout=10)
    assert response.status_code == 401
    assert response.json() == {"ok": False, "error_code": 401, "description": "Unauthorized"}
    status, body = call(server, "launchRockets")
    assert (status, body["description"]) == (404, "Not Found")


def test_updates_stay_until_an_offset_confirms_them(server: FakeTelegramServer) -> None:
    server.send_user_message(ALICE, ALICE, "one")
    server.send_user_message(ALICE, ALICE, "two")
    _, first = call(server, "getUpdates")
    _, again = call(server, "getUpdates")
    assert [u["message"]["text"] for u in first["result"]] == ["one", "two"]
    assert again["result"] == first["result"]  # nothing is confirmed without an offset
    last = first["result"][-1]["update_id"]
    _, after = call(server, "getUpdates", offset=last)
    assert [u["message"]["text"] for u in after["result"]] == ["two"]
    _, empty = call(server, "getUpdates", offset=last + 1)
    assert empty["result"] == [] and server.pending_updates == 0


def test_a_long_poll_waits_for_an_update_instead_of_spinning(server: FakeTelegramServer) -> None:
    answer: dict[str, Any] = {}

    def poll() -> None:
        answer.update(call(server, "getUpdates", timeout=30)[1])

    poller = threading.Thread(target=poll)
    poller.start()
    server.wait_until(lambda: server.polls_started == 1, what="for the poll to arrive")
    assert server.calls == []  # still waiting: the poll has not been answered
    server.send_user_message(ALICE, ALICE, "wake up")
    poller.join(10)
    assert [u["message"]["text"] for u in answer["result"]] == ["wake up"]
    assert [c.method for c in server.calls] == ["getUpdates"]


def test_an_idle_long_poll_runs_to_its_timeout(server: FakeTelegramServer) -> None:
    started = time.monotonic()
    _, body = call(server, "getUpdates", timeout=1)
    assert body == {"ok": True, "result": []}
    assert time.monotonic() - started >= 0.9  # it waited; an empty answer at once would spin


def test_a_second_poller_terminates_the_first_with_409(server: FakeTelegramServer) -> None:
    answer: dict[str, Any] = {}
    first = threading.Thread(
        target=lambda: answer.update(call(server, "getUpdates", timeout=30)[1])
    )
    first.start()
    server.wait_until(lambda: server.polls_started == 1)
    call(server, "getUpdates", timeout=0)
    first.join(10)
    assert answer["error_code"] == 409 and "terminated by other getUpdates" in answer["description"]


def test_allowed_updates_filters_edits(server: FakeTelegramServer) -> None:
    message_id = server.send_user_message(ALICE, ALICE, "typo")
    server.edit_user_message(ALICE, message_id, "fixed")
    _, body = call(server, "getUpdates", allowed_updates=["message", "callback_query"])
    assert [list(u)[1] for u in body["result"]] == ["message"]


def test_user_messages_look_like_telegrams(server: FakeTelegramServer) -> None:
    first = server.send_user_message(
        -1005,
        7,
        "/stop@herald_test_bot now",
        "supergroup",
        thread_id=3,
        username="bob",
        title="Ops",
    )
    server.send_user_message(-1005, 8, "ok", "supergroup", thread_id=3, reply_to=first)
    _, body = call(server, "getUpdates")
    command, reply = (u["message"] for u in body["result"])
    assert command["chat"] == {"id": -1005, "type": "supergroup", "title": "Ops", "is_forum": True}
    assert command["from"]["username"] == "bob" and command["from"]["is_bot"] is False
    assert command["entities"] == [
        {"type": "bot_command", "offset": 0, "length": len("/stop@herald_test_bot")}
    ]
    assert (command["message_thread_id"], command["is_topic_message"]) == (3, True)
    assert reply["reply_to_message"]["message_id"] == first


def test_the_test_side_refuses_impossible_traffic(server: FakeTelegramServer) -> None:
    with pytest.raises(ValueError, match="user's id"):
        server.send_user_message(5, 6, "private chats are the user's own")
    with pytest.raises(ValueError, match="supergroups"):
        server.send_user_message(-5, 6, "topics", "group", thread_id=1)
    server.add_chat(ALICE)
    with pytest.raises(ValueError, match="no message"):
        server.press_button(ALICE, ALICE, 99, "/approve")


@pytest.mark.parametrize(
    ("params", "status", "description"),
    [
        ({"text": "x" * 4097}, 400, "Bad Request: message is too long"),
        ({"text": "😀" * 2049}, 400, "Bad Request: message is too long"),
        ({"text": "   "}, 400, "Bad Request: message text is empty"),
        (
            {"text": "<b>open", "parse_mode": "HTML"},
            400,
            "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\"",
        ),
        (
            {"text": "<script>x</script>", "parse_mode": "HTML"},
            400,
            'Bad Request: can\'t parse entities: Unsupported start tag "script" at byte offset 0',
        ),
        ({"text": "hi", "message_thread_id": 42}, 400, "Bad Request: message thread not found"),
        (
            {"text": "hi", "reply_parameters": {"message_id": 77}},
            400,
            "Bad Request: message to be replied not found",
        ),
        (
            {
                "text": "hi",
                "reply_markup": {"inline_keyboard": [[{"text": "b", "callback_data": "x" * 65}]]},
            },
            400,
            "Bad Request: BUTTON_DATA_INVALID",
        ),
    ],
)
def test_send_message_validates_like_telegram(
    server: FakeTelegramServer, params: dict[str, Any], status: int, description: str
) -> None:
    server.add_chat(ALICE)
    code, body = call(server, "sendMessage", chat_id=ALICE, **params)
    assert (code, body) == (status, {"ok": False, "error_code": status, "description": description})
    assert server.sent_messages() == []


def test_html_is_measured_after_parsing(server: FakeTelegramServer) -> None:
    server.add_chat(ALICE)
    text = "<b>" + "&amp;" * 4096 + "</b>"  # 4096 visible characters
    code, body = call(server, "sendMessage", chat_id=ALICE, text=text, parse_mode="HTML")
    assert code == 200 and body["result"]["text"] == "&" * 4096


def test_a_reply_to_a_missing_message_may_be_allowed(server: FakeTelegramServer) -> None:
    server.add_chat(ALICE)
    code, body = call(
        server,
        "sendMessage",
        chat_id=ALICE,
        text="hi",
        reply_parameters={"message_id": 77, "allow_sending_without_reply": True},
    )
    assert code == 200 and "reply_to_message" not in body["result"]


def test_injected_faults(server: FakeTelegramServer) -> None:
    server.add_chat(ALICE)
    server.flood("sendMessage", retry_after=7)
    code, body = call(server, "sendMessage", chat_id=ALICE, text="x")
    assert (code, body["parameters"]) == (429, {"retry_after": 7})
    server.fail_chat(ALICE, "blocked")
    code, body = call(server, "sendChatAction", chat_id=ALICE, action="typing")
    assert (code, body["description"]) == (403, "Forbidden: bot was blocked by the user")
    server.fail_next("getMe", drop=True)
    with pytest.raises(httpx.HTTPError):
        call(server, "getMe")


def test_edits_and_deletes(server: FakeTelegramServer) -> None:
    server.add_chat(ALICE)
    _, sent = call(server, "sendMessage", chat_id=ALICE, text="v1")
    message_id = sent["result"]["message_id"]
    code, _ = call(server, "editMessageText", chat_id=ALICE, message_id=message_id, text="v2")
    assert code == 200 and server.sent_messages(ALICE)[0].text == "v2"
    code, body = call(server, "editMessageText", chat_id=ALICE, message_id=message_id, text="v2")
    assert code == 400 and body["description"].startswith("Bad Request: message is not modified")
    assert call(server, "deleteMessage", chat_id=ALICE, message_id=message_id)[0] == 200
    code, body = call(server, "editMessageText", chat_id=ALICE, message_id=message_id, text="v3")
    assert body["description"] == "Bad Request: message to edit not found"
    assert [e.text for e in server.edits] == ["v2"]


async def test_the_real_client_library_reads_the_answers(server: FakeTelegramServer) -> None:
    telegram = pytest.importorskip("telegram")
    from telegram.error import BadRequest, Forbidden, RetryAfter

    server.send_user_message(ALICE, ALICE, "/start", username="alice")
    async with telegram.Bot(server.token, base_url=server.base_url) as bot:
        [update] = await bot.get_updates(timeout=0)
        assert update.message.text == "/start" and update.message.chat.type == "private"
        with pytest.raises(BadRequest, match="too long"):
            await bot.send_message(ALICE, "x" * 4097)
        server.flood("sendMessage", retry_after=2)
        with pytest.raises(RetryAfter):
            await bot.send_message(ALICE, "x")
        server.fail_chat(ALICE, "blocked")
        with pytest.raises(Forbidden, match="blocked"):
            await bot.send_message(ALICE, "x")


def test_send_document_takes_a_multipart_upload_and_refuses_one_without_a_file(
    server: FakeTelegramServer,
) -> None:
    server.send_user_message(ALICE, ALICE, "hi")  # the chat exists once someone wrote
    url = f"{server.base_url}{server.token}/sendDocument"
    response = httpx.post(
        url,
        data={"chat_id": str(ALICE), "caption": "the numbers"},
        files={"document": ("numbers.csv", b"a,b\n1,2\n\x00", "text/csv")},
        timeout=10,
    )
    body = response.json()
    assert response.status_code == 200, body
    assert body["result"]["document"]["file_name"] == "numbers.csv"
    (sent,) = server.sent_messages(ALICE)
    assert sent.document is not None and sent.document.data == b"a,b\n1,2\n\x00"
    assert sent.text == "the numbers"

    status, refused = call(server, "sendDocument", chat_id=ALICE, document="a-file-id")
    assert (status, refused["description"]) == (
        400,
        "Bad Request: there is no document in the request",
    )
