"""End-to-end encryption through the real gateway and a real Synapse: in an encrypted room
the owner writes from a device of their own (a second mautrix client with its own crypto
store); Herald's answer reaches the homeserver only as ``m.room.encrypted`` and that
device decrypts it. What reached the homeserver is read from Synapse's own database."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import StartGateway
from matrix_harness import MatrixHarness
from mautrix.crypto.attachments import decrypt_attachment
from second_device import SecondDevice
from test_media import jpeg

from herald.testing.fake_llm import FakeLLMServer

pytestmark = pytest.mark.slow

REPORT = b"date,value\n2026-12-01,42\n" + bytes(range(256))


@pytest.fixture
def harness() -> Iterator[MatrixHarness]:
    made = MatrixHarness(encrypted_rooms=True)
    made.start()
    try:
        yield made
    finally:
        made.stop()


def bot_event_types(harness: MatrixHarness) -> list[str]:
    return [e["type"] for e in harness.bot_events("dm") if "state_key" not in e]


async def test_a_reply_in_an_encrypted_room_is_encrypted_and_decrypts_on_the_owners_device(
    harness: MatrixHarness, gateway: StartGateway, tmp_path: Path
) -> None:
    running = await gateway()
    device = await SecondDevice(harness.synapse.url, harness.owner_user, tmp_path / "dev").start()
    try:
        await device.say(harness.dm, "hello WORD-secret")
        seen = await device.wait_for("echo WORD-secret")
        assert seen.sender == harness.bot.user_id and seen.was_encrypted
        assert seen.room_id == harness.dm
        # an approval: the prompt, its edit once answered and the answer, all encrypted
        await device.say(harness.dm, "compute APPROVE")
        prompt = await device.wait_for_text("React to this message")
        harness.synapse.send(
            harness.owner_user,
            harness.dm,
            "m.reaction",
            {"m.relates_to": {"rel_type": "m.annotation", "event_id": prompt, "key": "👍"}},
        )
        await device.wait_for("The answer is 42.")
        # a file: uploaded as ciphertext, its key inside the encrypted event
        (Path(running.settings.config.gateway.cwd) / "report.csv").write_bytes(REPORT)
        await device.say(harness.dm, "please SENDFILE report.csv")
        upload = await device.wait_for("your file")
        assert upload.was_encrypted and "url" not in upload.content
        info = upload.content["file"]
        stored = harness.synapse.media(info["url"])
        assert REPORT not in stored  # the homeserver holds ciphertext only
        assert decrypt_attachment(
            stored, info["key"]["k"], info["hashes"]["sha256"], info["iv"]
        ) == (REPORT)
    finally:
        await device.stop()
    stored = harness.bot_events("dm")
    sent = [e for e in stored if "state_key" not in e]
    assert sent and {e["type"] for e in sent} == {"m.room.encrypted"}
    assert "WORD-secret" not in json.dumps(stored)  # no plaintext of it anywhere


async def test_encrypted_photos_and_voice_notes_take_the_media_path_and_the_voice_reply_is_sealed(
    harness: MatrixHarness, gateway: StartGateway, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """From the owner's own device, as Element sends them in an encrypted room: a photo
    reaches the model as an image part and a voice note is transcribed, both decrypted
    first; the spoken reply comes back as an encrypted voice message whose audio the
    homeserver holds only as ciphertext."""
    fake_llm.audio.transcript = "please say WORD-voice"
    running = await gateway(extra={"vision": {"main": "on"}})
    device = await SecondDevice(harness.synapse.url, harness.owner_user, tmp_path / "dev").start()
    photo = jpeg()
    try:
        await device.send_file(harness.dm, "cat.jpg", "image/jpeg", photo)
        for _ in range(1200):
            if fake_llm.model_requests():
                break
            await asyncio.sleep(0.05)
        (request,) = fake_llm.model_requests()
        parts = request.body["messages"][-1]["content"]
        assert any(p.get("type") == "image_url" for p in parts)
        saved = Path(running.settings.config.gateway.cwd) / "attachments" / "cat.jpg"
        assert saved.read_bytes() == photo  # decrypted before it was handed over
        await device.send_file(harness.dm, "note.ogg", "audio/ogg", b"OggS voice", voice=True)
        await device.wait_for("🎤 please say WORD-voice")
        await device.wait_for("echo WORD-voice")
        spoken = await device.wait_for("reply.mp3")
    finally:
        await device.stop()
    assert spoken.was_encrypted and "url" not in spoken.content
    assert spoken.content["msgtype"] == "m.audio"
    assert "org.matrix.msc3245.voice" in spoken.content
    info = spoken.content["file"]
    stored = harness.synapse.media(info["url"])
    assert fake_llm.audio.speech not in stored
    key, digest = info["key"]["k"], info["hashes"]["sha256"]
    assert decrypt_attachment(stored, key, digest, info["iv"]) == fake_llm.audio.speech
    sent = [e for e in harness.bot_events("dm") if "state_key" not in e]
    assert {e["type"] for e in sent} == {"m.room.encrypted"}


@pytest.mark.parametrize("notify", [True, False])
async def test_without_encryption_nothing_is_sent_into_an_encrypted_room(
    harness: MatrixHarness, gateway: StartGateway, notify: bool
) -> None:
    """Encryption off and a plaintext message in an encrypted room (any client can send
    one): Herald answers nothing rather than answer in the clear; with the owner's opt-in,
    one notice that says so, without the reply."""
    config = {"encryption": False, "notify_unencrypted_failure": notify}
    running = await gateway({"platforms": {"matrix": config}})
    harness.say(harness.owner, "hello WORD-plain")
    if notify:
        await harness.wait_for(lambda s: "could not encrypt" in s.text, "the notice", timeout=60)
    harness.say(harness.owner, "again WORD-plain2")  # a second refusal: no second notice
    for _ in range(600):  # both replies refused, kept in the ledger, never sent in clear
        if len(running.runner.outbox.undelivered()) >= 2:
            break
        await asyncio.sleep(0.05)
    assert len(running.runner.outbox.undelivered()) >= 2
    messages = [e for e in harness.bot_events("dm") if e["type"] == "m.room.message"]
    assert [m["content"]["msgtype"] for m in messages] == (["m.notice"] if notify else [])
    assert "WORD-plain" not in json.dumps(harness.bot_events("dm"))
