"""The adapter contract: what every chat platform does the same, through the real
gateway (lifecycle, runner, delivery ledger), the platform's real client library
against its fake server, and the fake model. One run per platform in `HARNESSES`."""

from __future__ import annotations

import asyncio

from harness import (
    LONG_REPLY,
    PlatformHarness,
    StartGateway,
    model_user_texts,
    said,
    until_tool_runs,
)

from herald.gateway.splitting import split_message
from herald.testing.fake_llm import FakeLLMServer


async def test_a_turn_is_answered_in_reply_to_the_message(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    await gateway()
    asked = harness.say(harness.owner, "hello WORD-alpha")
    reply = await harness.wait_for(lambda s: s.text == "echo WORD-alpha", "the reply")
    assert reply.reply_to == asked


STATUS_MARKS = ("✓ done ·", "■ stopped ·", "⏸ paused for a restart ·")


async def test_a_long_reply_is_split_within_the_platform_limit(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    harness.require("splitting")
    await gateway()
    harness.say(harness.owner, "the full REPORT please")
    expected = split_message(LONG_REPLY, harness.max_length(), harness.measure)
    assert len(expected) >= 2
    last = await harness.wait_for(
        lambda s: "That is the whole report." in s.text, "the last part", timeout=40
    )
    # A model call retried under load shows a status line (finalised "✓ done · …"),
    # which is not part of the reply: the reply's parts are counted without it.
    parts = [s for s in harness.sent() if not s.text.startswith(STATUS_MARKS)]
    assert len(parts) == len(expected) and parts[-1] == last
    assert all(harness.measure(p.text) <= harness.max_length() for p in parts)
    assert "Section 0 of the report" in parts[0].text


async def test_an_approval_is_pressed_by_the_owner_and_refused_for_someone_else(
    harness: PlatformHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    harness.require("groups")
    await gateway()
    harness.say(harness.owner, "compute APPROVE", where="group")
    prompt = await harness.wait_for(lambda s: bool(s.buttons), "approval prompt", where="group")
    assert "/approve" in prompt.buttons and "/deny" in prompt.buttons

    harness.press(harness.member, prompt, "/approve", where="group")
    refusal = await harness.wait_for(lambda s: "⛔" in s.text, "refusal", where="group")
    assert "approver" in refusal.text
    assert not any("42" in s.text for s in harness.sent(where="group"))  # nothing ran

    harness.press(harness.owner, prompt, "/approve", where="group")
    await harness.wait_for(lambda s: s.text == "The answer is 42.", "answer", where="group")


async def test_an_approval_in_a_direct_chat_is_pressed_by_the_owner(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    """The one approval every platform has, groups or not: the owner's own chat."""
    await gateway()
    harness.say(harness.owner, "compute APPROVE")
    prompt = await harness.wait_for(lambda s: bool(s.buttons), "approval prompt")
    assert "/approve" in prompt.buttons and "/deny" in prompt.buttons
    # nothing before the press (not just "42": an email's approval code is 4 random hex
    # digits, and 1 in 85 of them contains it)
    assert not any("The answer is" in s.text for s in harness.sent())
    harness.press(harness.owner, prompt, "/approve")
    await harness.wait_for(lambda s: s.text == "The answer is 42.", "answer")


async def test_a_busy_message_is_queued_and_stop_ends_the_turn_and_the_queue(
    harness: PlatformHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    await gateway({"busy_mode": "queue"})
    harness.say(harness.owner, "take it SLOW")
    await until_tool_runs(harness, fake_llm, "take it SLOW")
    harness.say(harness.owner, "then WORD-next")
    await harness.wait_for(lambda s: "Queued" in s.text, "the queued notice")
    harness.say(harness.owner, "/stop")
    stopped = await harness.wait_for(lambda s: "Stopping" in s.text, "the /stop answer")
    assert "Dropped 1 queued" in stopped.text
    harness.say(harness.owner, "afterwards WORD-after")  # the session is free again
    await harness.wait_for(lambda s: s.text == "echo WORD-after", "the next answer")
    texts = [s.text for s in harness.sent()]
    assert "echo WORD-next" not in texts and not any("The wait is over" in t for t in texts)


async def test_an_attachment_reaches_the_model(
    harness: PlatformHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    await gateway()
    harness.say(
        harness.owner, "see ATTACHED", attachment=("notes.txt", "text/plain", b"remember me")
    )
    await harness.wait_for(lambda s: s.text == "I see the file.", "the answer")
    assert any("notes.txt" in text for text in model_user_texts(fake_llm))


async def test_a_thread_is_its_own_session(
    harness: PlatformHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    harness.require("groups")
    await gateway()
    harness.say(harness.owner, "first WORD-in-a", where="group", thread=harness.thread_a)
    await harness.wait_for(
        lambda s: s.text == "echo WORD-in-a", "thread a", where="group", thread=harness.thread_a
    )
    harness.say(harness.owner, "second WORD-in-b", where="group", thread=harness.thread_b)
    await harness.wait_for(
        lambda s: s.text == "echo WORD-in-b", "thread b", where="group", thread=harness.thread_b
    )
    last = fake_llm.model_requests()[-1]
    history = " ".join(str(m.get("content")) for m in last.messages)
    assert "WORD-in-b" in history and "WORD-in-a" not in history


async def test_a_replayed_event_is_answered_once(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    await gateway()
    harness.say(harness.owner, "once WORD-once")
    await harness.wait_for(lambda s: s.text == "echo WORD-once", "the reply")
    harness.replay_last_event()
    await harness.replay_taken()
    # Same chat, same session: anything the replay started would answer before this.
    harness.say(harness.owner, "later WORD-later")
    await harness.wait_for(lambda s: s.text == "echo WORD-later", "the later reply")
    assert [s.text for s in harness.sent()].count("echo WORD-once") == 1


async def test_an_event_replayed_after_a_restart_mid_turn_is_not_run_again(
    harness: PlatformHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    first = await gateway()
    harness.say(harness.owner, "take it SLOW")
    await until_tool_runs(harness, fake_llm, "take it SLOW")
    assert await first.stop() == 0  # the turn is interrupted and stays marked in flight
    harness.replay_last_event()  # the platform sends the message again
    await gateway()  # a new process: it resumes the turn, and must not start it twice
    await harness.replay_taken()
    await harness.wait_for(lambda s: "restarted" in s.text, "the resume notice")
    harness.say(harness.owner, "later WORD-later")
    await harness.wait_for(lambda s: s.text == "echo WORD-later", "the later reply")
    asked = [t for t in model_user_texts(fake_llm) if said(t, "take it SLOW")]
    assert len(asked) == 1, asked


async def test_a_reply_whose_send_failed_is_retried_from_the_ledger(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    running = await gateway()
    harness.fail_sends(3)  # the first attempt and two retries from the outbox fail
    harness.say(harness.owner, "owed WORD-owed")
    await harness.wait_for(lambda s: s.text == "echo WORD-owed", "the retried reply")
    assert [s.text for s in harness.sent()].count("echo WORD-owed") == 1
    # the ledger row is settled just after the platform accepted the send
    for _ in range(200):
        if running.runner.outbox.undelivered() == []:
            break
        await asyncio.sleep(0.05)
    assert running.runner.outbox.undelivered() == []
    assert [s.text for s in harness.sent()].count("echo WORD-owed") == 1
