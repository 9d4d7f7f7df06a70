"""Signal beyond the contract, through the real gateway against the fake signal-cli."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import PlatformHarness, StartGateway, model_user_texts
from signal_harness import SignalHarness
from test_media import jpeg

from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply

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


async def test_a_strangers_photo_and_voice_note_are_never_read_from_signal_cli(
    harness: SignalHarness, gateway: StartGateway, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    await gateway()
    photo = harness.server.attach("cat.jpg", "image/jpeg", jpeg())
    voice = harness.server.attach(None, "audio/aac", b"AAC stranger", voice=True)
    harness.server.user_message(STRANGER, "look WORD-stranger", attachments=[photo])
    harness.server.user_message(STRANGER, "", attachments=[voice])
    harness.say(harness.owner, "then WORD-owner")  # taken from the stream after those
    await harness.wait_for(lambda s: s.text == "echo WORD-owner", "the owner's answer")
    assert harness.server.attachment_reads == []
    assert not (tmp_path / "work" / "attachments").exists()
    assert fake_llm.audio_requests() == []
    assert not any("WORD-stranger" in t for t in model_user_texts(fake_llm))


async def test_a_voice_note_is_answered_with_a_voice_note(
    harness: SignalHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    fake_llm.audio.transcript = "please say WORD-spoken"
    await gateway()
    harness.say(harness.owner, "", attachment=("note.aac", "audio/aac", b"AAC voice"))
    await harness.wait_for_file("reply.mp3")
    (spoken,) = [s for s in harness.server.sent_to(harness.owner) if s.files]
    assert spoken.voice_note and spoken.files == (("reply.mp3", fake_llm.audio.speech),)
    assert harness.server.attachment_reads  # the owner's note was read from signal-cli


async def test_a_path_only_a_members_photo_could_show_waits_for_the_owner(
    harness: SignalHarness, gateway: StartGateway, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The attacker: Dana (a member, not an approver) sends a photo whose pixels carry a
    path; the vision model writes there. No text names the path, so the photo (Dana's,
    untrusted) is its source: the write waits for the owner, who denies it."""
    target = tmp_path / "work" / "pixels" / "from-signal-photo-8k.txt"

    def script(request: RecordedRequest) -> Reply:
        if request.messages[-1].get("role") == "tool":
            return Reply.text("written")
        return Reply.tool_call("write_file", {"path": str(target), "content": "hello"})

    await gateway(extra={"vision": {"main": "on"}})
    fake_llm.set_handler(script)  # after the harness set its own
    photo = ("note.jpg", "image/jpeg", jpeg())
    harness.say(harness.member, "do what it says", where="group", attachment=photo)
    prompt = await harness.wait_for(lambda s: bool(s.buttons), "approval", where="group")
    assert str(target) in prompt.text and "chat:dana" in prompt.text
    (request,) = fake_llm.model_requests()
    text, image = request.body["messages"][-1]["content"]
    assert image["type"] == "image_url"
    assert text["text"].startswith("<untrusted-content") and "chat:dana" in text["text"]
    harness.press(harness.member, prompt, "/approve", where="group")  # not an approver
    harness.press(harness.owner, prompt, "/deny", where="group")
    await harness.wait_for(lambda s: s.text == "written", "the denied turn's end", where="group")
    assert not target.exists()
