"""Signal beyond the contract, through the real gateway against the fake signal-cli."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from harness import PlatformHarness, StartGateway, model_user_texts
from signal_harness import SignalHarness

from herald.testing.fake_llm import FakeLLMServer

STRANGER = "+15550000099"


@pytest.fixture
def harness() -> Iterator[PlatformHarness]:
    made = SignalHarness()
    made.start()
    try:
        yield made
    finally:
        made.stop()


async def test_a_reaction_that_arrives_before_its_prompt_is_answered_still_counts(
    harness: SignalHarness, gateway: StartGateway
) -> None:
    """signal-cli answers `send` after the message went out: a quick reaction can reach
    Herald before the prompt's timestamp does. The press must not be lost."""
    await gateway()
    harness.server.send_answer_delay = 1.0
    harness.say(harness.owner, "compute APPROVE")
    prompt = await harness.wait_for(lambda s: bool(s.buttons), "approval prompt")
    harness.press(harness.owner, prompt, "/approve")  # before Herald knows the prompt
    harness.server.send_answer_delay = 0.0
    await harness.wait_for(lambda s: s.text == "The answer is 42.", "the answer")


async def test_a_reaction_to_anything_else_is_just_a_reaction(
    harness: SignalHarness, gateway: StartGateway
) -> None:
    await gateway()
    harness.say(harness.owner, "hello WORD-one")
    reply = await harness.wait_for(lambda s: s.text == "echo WORD-one", "the reply")
    harness.press(harness.owner, reply, "/approve")  # 👍 on an ordinary answer
    harness.say(harness.owner, "then WORD-two")
    await harness.wait_for(lambda s: s.text == "echo WORD-two", "the next reply")
    assert not any("approve" in s.text.lower() for s in harness.sent() if not s.buttons)


async def test_a_profile_name_is_not_an_identity(
    harness: SignalHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    """A Signal profile name is whatever the sender types: a stranger calling
    themselves "kerry" is not the "@kerry" of an allowlist."""
    await gateway({"allowed_users": {"signal": ["@kerry"]}})
    harness.server.user_message(STRANGER, "hello WORD-spoofed", name="kerry")
    harness.say(harness.owner, "then WORD-owner")
    await harness.wait_for(lambda s: s.text == "echo WORD-owner", "the owner's answer")
    assert not any("WORD-spoofed" in t for t in model_user_texts(fake_llm))
    assert not any("echo" in s.text for s in harness.server.sent_to(STRANGER))
