"""Approvals as reply buttons (bound to their prompt and its chat, only approvers), and
media in (downloaded by id, size-limited, saved into <workdir>/attachments) and out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from harness import StartGateway, model_user_texts
from whatsapp_harness import MEMBER, OWNER, WhatsAppHarness

from herald.testing.fake_llm import FakeLLMServer


async def test_the_owner_presses_a_choice_of_the_prompt_and_the_command_runs(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    await whatsapp_gateway()
    wa.say(OWNER, "compute APPROVE")
    prompt = await wa.wait_for(lambda s: bool(s.buttons), "approval prompt")
    raw = next(s for s in wa.server.sent if s.wamid == prompt.ref)
    assert raw.interactive in ("button", "list") and "python3" in raw.text
    assert all(i.startswith("herald:") for i in prompt.extra["ids"])
    wa.press(OWNER, prompt, "/approve")
    await wa.wait_for(lambda s: s.text == "The answer is 42.", "the answer")


async def test_a_press_is_bound_to_its_prompt_and_chat(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    """Someone else sending the owner's button id from their own chat, and a press on a
    prompt that was already answered, run nothing."""
    await whatsapp_gateway()
    wa.say(OWNER, "compute APPROVE")
    prompt = await wa.wait_for(lambda s: bool(s.buttons), "approval prompt")
    raw = next(s for s in wa.server.sent if s.wamid == prompt.ref)
    deny_id = prompt.extra["ids"][prompt.buttons.index("/deny")]
    approve_id = prompt.extra["ids"][prompt.buttons.index("/approve")]
    wa.server.press(MEMBER, raw, approve_id)  # from the member's chat
    for _ in range(400):
        if any("expired" in s.text for s in wa.server.sent_to(MEMBER)):
            break
        await asyncio.sleep(0.05)
    assert any("expired" in s.text for s in wa.server.sent_to(MEMBER))
    assert not any("42" in s.text for s in wa.sent())
    wa.server.press(OWNER, raw, deny_id)
    await wa.wait_for(lambda s: "Denied" in s.text or "denied" in s.text, "the denial")
    wa.server.press(OWNER, raw, approve_id)  # the same prompt again: it answered once
    await wa.wait_for(lambda s: "expired" in s.text, "the expired notice")
    wa.say(OWNER, "then WORD-after")
    await wa.wait_for(lambda s: s.text == "echo WORD-after", "the next answer")
    tool_results = [
        str(m.get("content"))
        for r in fake_llm.model_requests()
        for m in r.messages
        if m.get("role") == "tool"
    ]
    assert tool_results and not any("42" in t for t in tool_results)  # it never ran


async def test_a_member_who_may_not_approve_is_refused_in_their_own_chat(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    await whatsapp_gateway()
    wa.server.user_message(MEMBER, "compute APPROVE")
    prompt = await _wait_member(wa, lambda s: bool(s.buttons))
    raw = next(s for s in wa.server.sent if s.wamid == prompt.wamid)
    wa.server.press(MEMBER, raw, raw.buttons[0][0])
    refusal = await _wait_member(wa, lambda s: "⛔" in s.text)
    assert "approver" in refusal.text
    assert not any("42" in s.text for s in wa.server.sent_to(MEMBER))


async def _wait_member(wa: WhatsAppHarness, predicate: object) -> object:
    for _ in range(600):
        found = [s for s in wa.server.sent_to(MEMBER) if predicate(s)]  # type: ignore[operator]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise TimeoutError(f"nothing matched in {[s.text[:60] for s in wa.server.sent_to(MEMBER)]}")


async def test_media_in_is_downloaded_by_id_and_saved_into_the_workdir(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    running = await whatsapp_gateway()
    content = bytes(range(256)) * 4
    wa.say(OWNER, "see ATTACHED", attachment=("scan.pdf", "application/pdf", content))
    await wa.wait_for(lambda s: s.text == "I see the file.", "the answer")
    saved = Path(running.settings.config.gateway.cwd or "") / "attachments" / "scan.pdf"
    assert saved.read_bytes() == content
    assert any(str(saved) in t for t in model_user_texts(fake_llm))


async def test_media_over_the_limit_is_noted_not_saved(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    running = await whatsapp_gateway(platform={"max_attachment_mb": 0.001})
    wa.say(OWNER, "see ATTACHED", attachment=("big.bin", "application/octet-stream", b"x" * 4096))
    await wa.wait_for(lambda s: s.text == "I see the file.", "the answer")
    folder = Path(running.settings.config.gateway.cwd or "") / "attachments"
    assert not (folder / "big.bin").exists()
    assert any("big.bin" in t and "not saved" in t for t in model_user_texts(fake_llm))


async def test_a_voice_note_is_answered_with_an_audio_message(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    fake_llm.audio.transcript = "please say WORD-spoken"
    await whatsapp_gateway()
    wa.say(OWNER, "", attachment=("rec.ogg", "audio/ogg", b"OggS voice"))
    await wa.wait_for(lambda s: s.text == "echo WORD-spoken", "the answer")
    await wa.wait_for_file("reply.mp3")
    (spoken,) = [s for s in wa.server.sent_to(OWNER) if s.media is not None]
    assert spoken.kind == "audio" and spoken.media == ("reply.mp3", fake_llm.audio.speech)


async def test_media_of_a_number_the_gateway_allows_is_fetched_too(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    """The gateway decides who may talk (its allowlists, pairing, identities), and the
    media of whoever it lets in is fetched: the adapter keeps no narrower list of its own
    (it used to, so a number allowed only gateway-wide had its photo left unsaved)."""
    friend = "+15550000030"
    await whatsapp_gateway({"allowed_users": {"whatsapp": [friend]}})
    wa.server.user_message(friend, "see ATTACHED", media=("scan.pdf", "application/pdf", b"%PDF"))
    assert await asyncio.to_thread(fake_llm.wait_for_requests, 1, 30.0), "no turn ran"
    assert wa.server.downloads != []
    assert any("scan.pdf" in t and "saved as" in t for t in model_user_texts(fake_llm))
