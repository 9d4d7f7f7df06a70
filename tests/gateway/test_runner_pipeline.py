"""The runner end to end over the loopback platform: a message becomes a turn against
the fake model, the reply is delivered (redacted, split, recorded), sessions persist
across restarts and differ per chat, and provider errors become human sentences."""

from __future__ import annotations

import asyncio
import time

from gateway_support import eventually

from herald.gateway import StreamCallbacks, turns
from herald.gateway.runner import GatewayRunner
from herald.gateway.testing import LoopbackAdapter
from herald.state import StateStore
from herald.testing.fake_llm import Fault, Reply

SECRET_NAME = "HERALD_TEST_SERVICE_SECRET"
SECRET_VALUE = "zq-echoed-secret-4e1d9b"


async def test_a_message_is_answered_in_the_chat(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway()
    fake_llm.enqueue(Reply.text("Hello from the fake model."))
    event = chat.event("hi there")
    result = await chat.inject(event)
    assert result.status == "replied" and result.text == "Hello from the fake model."
    assert chat.texts() == ["Hello from the fake model."]
    assert chat.sent[0].reply_to == event.message_id
    assert result.session_id and result.exit_reason == "text_response"
    assert chat.typing_calls >= 1
    request = fake_llm.model_requests()[-1]
    assert request.last_user_text == "hi there"
    with StateStore(runner.settings.home.state_db) as store:
        session = store.get_session(result.session_id)
        assert session is not None and session.source == "loopback"
        assert session.title == "hi there"


async def test_the_session_continues_and_survives_a_restart(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway()
    first = await chat.inject("remember the number 7")
    second = await chat.inject("what was it?")
    assert first.session_id == second.session_id
    assert len(fake_llm.model_requests()[-1].messages) > 3  # the history came along
    settings = runner.settings
    await runner.shutdown(0)
    again = GatewayRunner({"default": settings}, [chat])
    await chat.connect(again)
    try:
        third = await chat.inject("and now?")
    finally:
        await again.shutdown(0)
    assert third.session_id == first.session_id


async def test_different_chats_get_different_sessions_and_run_in_parallel(
    start_gateway, fake_llm
) -> None:
    _runner, chat = await start_gateway({"allowed_users": {"loopback": ["user-1", "user-2"]}})
    fake_llm.set_handler(lambda request: Reply.text("slow answer", delay=1.0))
    started = time.monotonic()
    one, two = await asyncio.gather(
        chat.inject("first", chat_id="a", user_id="user-1"),
        chat.inject("second", chat_id="b", user_id="user-2"),
    )
    elapsed = time.monotonic() - started
    assert one.session_id != two.session_id
    assert elapsed < 1.9, f"two sessions ran one after the other ({elapsed:.1f} s)"


async def test_secrets_are_redacted_from_replies(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway(env={SECRET_NAME: SECRET_VALUE})
    fake_llm.enqueue(Reply.text(f"The value is {SECRET_VALUE}, keep it safe."))
    result = await chat.inject("what is the service secret?")
    assert SECRET_VALUE not in result.text and "[REDACTED]" in result.text
    assert all(SECRET_VALUE not in text for text in chat.texts())


async def test_streamed_text_is_redacted_for_request_response_callers(
    start_gateway, fake_llm
) -> None:
    api = LoopbackAdapter("api-like", push=False)
    _runner, _chat = await start_gateway(
        {"allowed_users": {"api-like": ["*"]}}, env={SECRET_NAME: SECRET_VALUE}, adapter=api
    )
    fake_llm.enqueue(Reply.text(f"token {SECRET_VALUE} done", chunk_size=3))
    deltas: list[str] = []
    result = await api.inject("go", stream=StreamCallbacks(on_text_delta=deltas.append))
    assert result.status == "replied"
    streamed = "".join(deltas)
    assert SECRET_VALUE not in streamed and "[REDACTED]" in streamed
    assert api.sent == []  # request/response: nothing pushed


async def test_a_long_reply_is_split_and_every_part_recorded(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway(max_length=200)
    paragraphs = [f"Paragraph {i}: " + "words " * 20 for i in range(6)]
    fake_llm.enqueue(Reply.text("\n\n".join(paragraphs)))
    event = chat.event("long please")
    await chat.inject(event)
    assert len(chat.sent) > 1
    total = len(chat.sent)
    for index, message in enumerate(chat.sent, 1):
        assert len(message.text) <= 200
        assert message.text.endswith(f"({index}/{total})")
    parts = runner.state.delivery_parts(f"reply:loopback:chat-1:{event.message_id}")
    assert [p.status for p in parts.values()] == ["sent"] * total
    assert [p.message_id for p in parts.values()] == [m.message_id for m in chat.sent]


async def test_an_overloaded_provider_becomes_a_human_sentence(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue([Fault.status(529, "Overloaded")] * 4)
    result = await chat.inject("hello?")
    assert result.status == "error"
    assert (
        result.text
        == "⚠️ The model provider is overloaded: HTTP 529: Overloaded; try again in a minute."
    )
    assert chat.texts()[-1] == result.text
    # the status line showed the retries as they happened, in the same words
    status = [m for m in chat.sent if m.edits or m.text.startswith("⚙")]
    assert any("overloaded; retrying in" in e for m in status for e in [m.text, *m.edits])


async def test_a_redelivered_message_is_not_answered_twice(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    event = chat.event("only once please")
    await chat.inject(event)
    again = await chat.inject(event)
    assert again.status == "ignored"
    assert len(fake_llm.model_requests()) == 1
    assert chat.texts() == ["(fake) done"]


async def test_media_notes_reach_the_model(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    await chat.inject("what is this?", media=("photo 800x600",))
    text = fake_llm.model_requests()[-1].last_user_text or ""
    assert "what is this?" in text and "[The user attached: photo 800x600]" in text


async def test_idle_workers_leave_no_slots_behind(start_gateway) -> None:
    runner, chat = await start_gateway()
    await chat.inject("hi")
    await eventually(lambda: not runner.busy_slots())
    assert runner.running_turns == 0


class SlowTypingChat(LoopbackAdapter):
    """A chat whose typing indicator takes a while to reach the platform, as over a real
    link, and which records whether one was cut off half-way."""

    def __init__(self) -> None:
        super().__init__()
        self.typing_started = self.typing_finished = self.typing_cut = 0

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        self.typing_started += 1
        try:
            await asyncio.sleep(0.4)
        except asyncio.CancelledError:
            self.typing_cut += 1
            raise
        self.typing_finished += 1


async def test_a_typing_indicator_in_flight_is_never_cut_off_when_the_turn_ends(
    start_gateway, fake_llm
) -> None:
    """HTTP clients do not all survive a request cancelled half-way: httpcore 1.0.9 leaves
    the connection of a request cancelled just after connecting open and unusable for
    good (encode/httpcore#1093), and the gateway ended every turn by cancelling its
    typing loop, so a long-lived gateway gathered dead Telegram sockets. The loop is
    now told to stop and leaves its last indicator to finish."""
    _runner, chat = await start_gateway({"typing_interval": 0.05}, adapter=SlowTypingChat())
    fake_llm.enqueue(Reply.text("quick"))
    result = await chat.inject("hi")
    assert result.text == "quick"
    assert chat.typing_started >= 1
    await asyncio.sleep(0.6)  # the indicator in flight when the turn ended has finished
    started = chat.typing_started
    await asyncio.sleep(0.3)
    assert chat.typing_cut == 0
    assert chat.typing_finished == chat.typing_started
    assert chat.typing_started == started, "the typing loop went on after the turn"


class StuckTypingChat(LoopbackAdapter):
    """A chat whose typing indicator never comes back (a platform that stopped answering)."""

    def __init__(self) -> None:
        super().__init__()
        self.typing_cut = 0

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.typing_cut += 1
            raise


async def test_a_typing_indicator_that_never_returns_does_not_hold_up_the_reply_or_live_forever(
    start_gateway, fake_llm, monkeypatch
) -> None:
    monkeypatch.setattr(turns, "TYPING_SETTLE_SECONDS", 0.1)
    monkeypatch.setattr(turns, "TYPING_ABANDON_SECONDS", 0.3)
    _runner, chat = await start_gateway(adapter=StuckTypingChat())
    fake_llm.enqueue(Reply.text("still here"))
    result = await chat.inject("hi")  # the reply does not wait on the indicator for good
    assert result.text == "still here" and chat.texts() == ["still here"]
    assert chat.typing_cut == 0  # not cut off at the turn's end...
    await eventually(lambda: chat.typing_cut == 1, timeout=5)  # ...but given up on later
