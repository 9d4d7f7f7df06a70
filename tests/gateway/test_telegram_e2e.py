"""End to end: a Telegram conversation through the real gateway.

The real python-telegram-bot client talks to the fake Bot API server, the gateway
lifecycle (`load_adapters` + `serve`) runs the real `GatewayRunner`, and the model is
the fake LLM server. Two users: Alice in a DM and Bob in a group (Carol, also in the
group, is not allowed). The story covers an approval by button, a long reply split for
Telegram, `/stop` interrupting a running tool, and a restart mid-turn followed by
auto-resume.

The fake model answers by what the conversation is about (a code word in the user's
message) and how many tool results followed it, so two chats can never take each
other's scripted answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("telegram")

from test_telegram_support import ALICE, BOB, CAROL, GROUP

from herald.config import Settings
from herald.gateway.platforms.telegram.adapter import TelegramAdapter
from herald.gateway.splitting import split_message
from herald.safety import clear_secret_values
from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply
from herald.testing.fake_telegram import FakeTelegramServer, SentMessage, utf16_length
from herald.testing.homes import fake_model_config, make_home, merge

APPROVAL_COMMAND = "python3 -c 'print(6*7)'"  # inline interpreter code: needs approval
LONG_REPLY = "\n\n".join(
    [
        f"Part of the report 📈 #{i}: " + "all systems nominal, nothing to do. " * 12
        for i in range(18)
    ]
    + ["```text\n" + "log line ✅ ok\n" * 120 + "```", "That is the whole report."]
)
RESUMED_TEXT = "Picked up after the restart: the long task is done."


def _tool_results_since_user(request: RecordedRequest) -> int:
    count = 0
    for message in reversed(request.messages):
        if message.get("role") == "user":
            break
        count += message.get("role") == "tool"
    return count


def _script(request: RecordedRequest) -> Reply | None:
    """The fake model: a code word in the newest user message picks the story."""
    text = request.last_user_text or ""
    done = _tool_results_since_user(request)
    if "Herald was restarted" in text:
        return Reply.text(RESUMED_TEXT)
    if "ALPHA" in text:
        return Reply.text("Hi Alice! How can I help?")
    if "BRAVO" in text:
        return Reply.text("Hello group, Bob asked for this.")
    if "CHARLIE" in text:
        if done == 0:
            return Reply.tool_call("terminal", {"command": APPROVAL_COMMAND})
        return Reply.text("The answer is 42.")
    if "DELTA" in text:
        return Reply.text(LONG_REPLY)
    if "ECHO" in text or "FOXTROT" in text:
        if done == 0:
            return Reply.tool_call("terminal", {"command": "sleep 30"})
        return Reply.text("The wait is over.")
    return None


class Gateway:
    """`herald gateway run`, minus the signals: the lifecycle's own `serve` on this loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.stop_event = asyncio.Event()
        self.task: asyncio.Task[int] | None = None
        self.adapter: TelegramAdapter | None = None

    async def start(self) -> Gateway:
        from herald.gateway.lifecycle import load_adapters, serve, served_settings
        from herald.gateway.runner import GatewayRunner

        adapters, problems = load_adapters(self.settings)
        assert problems == [] and len(adapters) == 1
        assert isinstance(adapters[0], TelegramAdapter)
        self.adapter = adapters[0]
        runner = GatewayRunner(
            served_settings(self.settings), default_profile=self.settings.home.profile_label
        )
        self.task = asyncio.ensure_future(
            serve(runner, adapters, home=self.settings.home, stop=self.stop_event)
        )
        return self

    async def stop(self) -> int:
        assert self.task is not None
        self.stop_event.set()
        return await asyncio.wait_for(self.task, 30)


@pytest.fixture
def telegram() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as server:
        yield server


@pytest.fixture
def settings(
    tmp_path: Path, fake_llm: FakeLLMServer, telegram: FakeTelegramServer
) -> Iterator[Settings]:
    workdir = tmp_path / "work"
    workdir.mkdir()
    fake_llm.set_handler(_script)
    config = merge(
        fake_model_config(fake_llm),
        {
            "learning": {"enabled": False},  # no background reviews asking the model
            "gateway": {
                "cwd": str(workdir),
                "status_edit_interval": 0.0,
                "drain_seconds": 0.0,  # a stop interrupts running turns at once
                "platforms": {
                    "telegram": {
                        "enabled": True,
                        "token": "${TELEGRAM_BOT_TOKEN}",
                        "base_url": telegram.base_url,
                        "allowed_users": [str(ALICE), "@bob"],
                    }
                },
            },
        },
    )
    yield make_home(tmp_path / "home", config, {"TELEGRAM_BOT_TOKEN": telegram.token})
    clear_secret_values()


@pytest.fixture
async def gateway(settings: Settings) -> AsyncIterator[Callable[[], Any]]:
    started: list[Gateway] = []

    async def start() -> Gateway:
        running = await Gateway(settings).start()
        started.append(running)
        return running

    yield start
    for running in started:
        if running.task is not None and not running.task.done():
            await running.stop()


async def _message(
    server: FakeTelegramServer,
    chat_id: int,
    predicate: Callable[[SentMessage], bool],
    what: str,
    timeout: float = 20.0,
) -> SentMessage:
    def probe() -> SentMessage | None:
        return next((m for m in server.sent_messages(chat_id) if predicate(m)), None)

    return await server.await_until(probe, timeout, what)


def _texts(server: FakeTelegramServer, chat_id: int) -> list[str]:
    return [m.text for m in server.sent_messages(chat_id)]


async def test_a_telegram_conversation_through_the_gateway(
    telegram: FakeTelegramServer, fake_llm: FakeLLMServer, gateway: Callable[[], Any]
) -> None:
    await gateway()

    # Alice writes in a DM; the answer replies to her message.
    hello = telegram.send_user_message(ALICE, ALICE, "hello ALPHA", username="alice")
    reply = await _message(telegram, ALICE, lambda m: "Hi Alice" in m.text, "Alice's reply")
    assert reply.reply_to_message_id == hello
    assert any(a.chat_id == ALICE and a.action == "typing" for a in telegram.chat_actions)

    # In the group, Carol is not allowed and is ignored; Bob (allowed by @name) is answered.
    telegram.send_user_message(GROUP, CAROL, "me too BRAVO", "group", username="carol")
    asked = telegram.send_user_message(GROUP, BOB, "status BRAVO", "group", username="bob")
    group_reply = await _message(telegram, GROUP, lambda m: "Bob asked" in m.text, "Bob's reply")
    assert group_reply.reply_to_message_id == asked
    assert _texts(telegram, GROUP) == ["Hello group, Bob asked for this."]


async def test_an_approval_by_button(
    telegram: FakeTelegramServer, fake_llm: FakeLLMServer, gateway: Callable[[], Any]
) -> None:
    await gateway()
    telegram.send_user_message(ALICE, ALICE, "compute CHARLIE", username="alice")
    prompt = await _message(telegram, ALICE, lambda m: bool(m.buttons), "the approval request")
    assert APPROVAL_COMMAND in prompt.text  # shown exactly as it will run
    offered = {b.callback_data for row in prompt.buttons for b in row}
    assert {"/approve", "/deny"} <= offered
    assert not any("42" in text for text in _texts(telegram, ALICE))  # nothing ran yet

    telegram.press_button(ALICE, ALICE, prompt.message_id, "/approve")
    await _message(telegram, ALICE, lambda m: m.text == "The answer is 42.", "the final answer")
    assert telegram.callback_answers, "the button press was answered"
    tool_results = [
        m["content"]
        for request in fake_llm.model_requests()
        for m in request.messages
        if m.get("role") == "tool"
    ]
    assert any("42" in str(content) for content in tool_results)


async def test_a_long_reply_is_split_for_telegram(
    telegram: FakeTelegramServer, gateway: Callable[[], Any]
) -> None:
    await gateway()
    asked = telegram.send_user_message(GROUP, BOB, "full report DELTA", "group", username="bob")
    expected = split_message(LONG_REPLY, 4096, utf16_length)
    assert len(expected) >= 3 and utf16_length(LONG_REPLY) > 2 * 4096
    parts = await telegram.await_messages(GROUP, len(expected), timeout=20)
    assert len(parts) == len(expected)
    assert [p.text.rsplit("\n", 1)[-1] for p in parts] == [
        f"({i}/{len(expected)})" for i in range(1, len(expected) + 1)
    ]
    assert parts[0].reply_to_message_id == asked
    assert all(p.parse_mode == "HTML" and utf16_length(p.text) <= 4096 for p in parts)
    assert "That is the whole report." in parts[-1].text
    # The code block was closed and reopened across parts, so every part renders alone.
    assert all(p.raw_text.count("<pre>") == p.raw_text.count("</pre>") for p in parts)


async def test_stop_interrupts_a_running_tool(
    telegram: FakeTelegramServer, gateway: Callable[[], Any]
) -> None:
    await gateway()
    telegram.send_user_message(GROUP, BOB, "wait a bit ECHO", "group", username="bob")
    status = await _message(
        telegram, GROUP, lambda m: "sleep 30" in m.text, "the status line of the running tool"
    )
    telegram.send_user_message(GROUP, BOB, "/stop", "group", username="bob")
    await _message(telegram, GROUP, lambda m: "Stopping" in m.text, "the /stop answer")
    # The status line ends as stopped long before `sleep 30` could have finished.
    await telegram.await_until(
        lambda: any(
            e.message_id == status.message_id and "stopped" in e.text for e in telegram.edits
        ),
        timeout=20,
        what="for the status line to say the turn stopped",
    )
    assert not any("The wait is over" in text for text in _texts(telegram, GROUP))


async def test_a_restart_mid_turn_resumes_automatically(
    telegram: FakeTelegramServer, fake_llm: FakeLLMServer, gateway: Callable[[], Any]
) -> None:
    first = await gateway()
    telegram.send_user_message(ALICE, ALICE, "long task FOXTROT", username="alice")
    await _message(telegram, ALICE, lambda m: "sleep 30" in m.text, "the running tool's status")

    assert await first.stop() == 0  # SIGTERM-equivalent: drain 0 s interrupts the turn
    assert telegram.pending_updates == 0
    before = len(fake_llm.model_requests())

    await gateway()  # a new process on the same home
    await _message(telegram, ALICE, lambda m: "restarted" in m.text, "the resume notice")
    await _message(telegram, ALICE, lambda m: m.text == RESUMED_TEXT, "the resumed answer")
    resumed = fake_llm.model_requests()[before:]
    history = resumed[-1].messages
    assert any("FOXTROT" in str(m.get("content")) for m in history if m.get("role") == "user")
    calls = [c["id"] for m in history for c in m.get("tool_calls") or []]
    answered = [m.get("tool_call_id") for m in history if m.get("role") == "tool"]
    assert calls and sorted(calls) == sorted(answered)  # the interrupted call got its result
    assert sum(e == "long task FOXTROT" for e in _texts(telegram, ALICE)) == 0
