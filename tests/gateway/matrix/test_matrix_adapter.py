"""The Matrix adapter on its own against a real Synapse (no gateway): its login, what it
keeps on disk, which reaction answers which request, and how streaming edits are paced."""

from __future__ import annotations

import asyncio
import json
import stat
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mautrix.crypto.attachments import decrypt_attachment

from herald.config.schema_matrix import MatrixPlatformConfig
from herald.gateway.contracts import Button, MessageEvent, OutgoingFile
from herald.gateway.platforms.matrix.adapter import UNREADABLE, MatrixAdapter
from herald.gateway.platforms.matrix.config import MatrixSecrets
from herald.testing.synapse import (
    MatrixUser,
    SynapseServer,
    SynapseUnavailable,
    shared_synapse,
    unique,
)
from herald.testing.synapse_proxy import SynapseProxy

pytestmark = pytest.mark.slow
VOICE_BYTES = b"ID3 spoken reply WORD-voice " + bytes(range(64))
REPORT = b"date,value\n2026-12-02,7 WORD-report\n" + bytes(range(32))


@dataclass
class RecordingSink:
    events: list[MessageEvent] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def record_inbound(self, platform: str, event_id: str) -> str:
        verdict = "seen" if event_id in self.seen else "new"
        self.seen.add(event_id)
        return verdict

    async def dispatch(self, event: MessageEvent, adapter: Any) -> None:
        self.events.append(event)

    async def wait(self, count: int) -> list[MessageEvent]:
        for _ in range(600):
            if len(self.events) >= count:
                return self.events
            await asyncio.sleep(0.05)
        raise TimeoutError(f"only {len(self.events)} events reached the sink")


@dataclass
class Setup:
    synapse: SynapseServer
    bot: MatrixUser
    owner: MatrixUser
    room: str
    store: Path

    def adapter(
        self, *, password: bool = False, homeserver: str | None = None, **options: Any
    ) -> MatrixAdapter:
        homeserver = homeserver or self.synapse.url
        config = MatrixPlatformConfig(
            enabled=True,
            homeserver=homeserver,
            user_id=self.bot.user_id,
            allowed_users=[self.owner.user_id],
            sync_timeout_seconds=2.0,
            **options,
        )
        secrets = MatrixSecrets(
            homeserver,
            self.bot.user_id,
            access_token=None if password else self.bot.access_token,
            password=self.bot.password if password else None,
        )
        return MatrixAdapter(config, secrets, store_dir=self.store)


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    try:
        synapse = shared_synapse()
    except SynapseUnavailable as exc:
        pytest.skip(f"no Synapse homeserver: {exc}")
    bot, owner = synapse.register(unique("herald")), synapse.register(unique("owner"))
    room = synapse.request(
        "POST",
        "/_matrix/client/v3/createRoom",
        {"invite": [bot.user_id], "is_direct": True, "preset": "private_chat"},
        token=owner.access_token,
    )["room_id"]
    synapse.request("POST", f"/_matrix/client/v3/join/{room}", {}, token=bot.access_token)
    yield Setup(synapse, bot, owner, room, tmp_path / "matrix")


async def synced(adapter: MatrixAdapter) -> None:
    for _ in range(600):
        if adapter.health.assess().last_receive is not None:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("the adapter never finished a sync")


def react(setup: Setup, target: str, key: str) -> None:
    relation = {"rel_type": "m.annotation", "event_id": target, "key": key}
    setup.synapse.send(setup.owner, setup.room, "m.reaction", {"m.relates_to": relation})


async def test_a_reaction_answers_only_the_newest_request_of_its_room(setup: Setup) -> None:
    adapter, sink = setup.adapter(), RecordingSink()
    await adapter.connect(sink)
    await synced(adapter)
    try:
        buttons = [[Button("✅ Allow once", "/approve")], [Button("❌ Deny", "/deny")]]
        first = await adapter.send(setup.room, "⚠️ Approval needed: one", buttons=buttons)
        second = await adapter.send(setup.room, "⚠️ Approval needed: two", buttons=buttons)
        react(setup, first.message_ids[0], "👍")  # the old request: just a reaction now
        react(setup, second.message_ids[0], "👎️")  # with the variation selector Element adds
        (press,) = await sink.wait(1)
        assert press.text == "/deny" and press.reply_to == second.message_ids[0]
        assert press.user_id == setup.owner.user_id and press.chat_type == "private"
    finally:
        await adapter.disconnect()


def joined(setup: Setup) -> list[str]:
    answer = setup.synapse.request(
        "GET", "/_matrix/client/v3/joined_rooms", token=setup.bot.access_token
    )
    return list(answer["joined_rooms"])


async def test_invitations_are_accepted_from_allowed_users_only(setup: Setup) -> None:
    adapter, sink = setup.adapter(), RecordingSink()
    await adapter.connect(sink)
    await synced(adapter)
    try:
        stranger = setup.synapse.register(unique("eve"))
        create = "/_matrix/client/v3/createRoom"
        theirs = setup.synapse.request(
            "POST", create, {"invite": [setup.bot.user_id]}, token=stranger.access_token
        )["room_id"]
        ours = setup.synapse.request(
            "POST", create, {"invite": [setup.bot.user_id]}, token=setup.owner.access_token
        )["room_id"]
        for _ in range(600):
            if ours in joined(setup):
                break
            await asyncio.sleep(0.05)
        assert ours in joined(setup)
        # a later sync than both invitations: by then the stranger's was decided too
        setup.synapse.send(
            setup.owner, setup.room, "m.room.message", {"msgtype": "m.text", "body": "hi"}
        )
        await sink.wait(1)
        assert theirs not in joined(setup)
    finally:
        await adapter.disconnect()


async def test_what_was_said_before_herald_joined_is_not_answered(setup: Setup) -> None:
    """A room Herald is invited into later: its first sync of that room brings recent
    history, which is not addressed to it now."""
    adapter, sink = setup.adapter(), RecordingSink()
    await adapter.connect(sink)
    await synced(adapter)
    try:
        owner = setup.owner
        room = setup.synapse.request(
            "POST", "/_matrix/client/v3/createRoom", {}, token=owner.access_token
        )["room_id"]
        old: dict[str, Any] = {"msgtype": "m.text", "body": "old WORD-before"}
        old["m.mentions"] = {"user_ids": [setup.bot.user_id]}
        setup.synapse.send(owner, room, "m.room.message", old)
        setup.synapse.request(
            "POST",
            f"/_matrix/client/v3/rooms/{room}/invite",
            {"user_id": setup.bot.user_id},
            token=owner.access_token,
        )
        for _ in range(600):
            if room in joined(setup):
                break
            await asyncio.sleep(0.05)
        new: dict[str, Any] = {"msgtype": "m.text", "body": "new WORD-after"}
        new["m.mentions"] = {"user_ids": [setup.bot.user_id]}
        setup.synapse.send(owner, room, "m.room.message", new)
        (event,) = await sink.wait(1)
        assert event.text == "new WORD-after"
    finally:
        await adapter.disconnect()


async def test_a_message_that_cannot_be_decrypted_is_not_dropped_in_silence(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    from herald.gateway.platforms.matrix import crypto

    monkeypatch.setattr(crypto, "_KEY_WAIT_SECONDS", 1.0)  # the key's wait: 10 s in use
    adapter, sink = setup.adapter(), RecordingSink()
    await adapter.connect(sink)
    await synced(adapter)  # the first sync only catches up: history is not answered
    try:
        sealed = {  # a Megolm event whose room key never reaches Herald
            "algorithm": "m.megolm.v1.aes-sha2",
            "ciphertext": "AwgAEnACgAkLmt6qF84IK++J7UDH2Za1YVchHyprqTqsg",
            "device_id": setup.owner.device_id,
            "sender_key": "IlRMeOPX2e0MurIyfWEucYBRVOEEUMrOHqn/8mLqMjA",
            "session_id": "X3lUlvLELLYxeTx4yOVu6UDpasGEVO0Jbu+QFnm0cKQ",
        }
        asked = setup.synapse.send(setup.owner, setup.room, "m.room.encrypted", sealed)
        for _ in range(600):
            said = [
                e
                for e in setup.synapse.events(setup.room, setup.bot.user_id)
                if e["type"] == "m.room.message"
            ]
            if said:
                break
            await asyncio.sleep(0.05)
        (told,) = said
        assert told["content"]["body"] == UNREADABLE
        assert told["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == asked
        assert sink.events == []  # no turn for what could not be read
    finally:
        await adapter.disconnect()


async def test_streaming_edits_are_folded_within_the_interval(setup: Setup) -> None:
    adapter = setup.adapter(edit_interval_seconds=0.5)
    await adapter.connect(RecordingSink())
    try:
        sent = await adapter.send(setup.room, "draft 0")
        message = sent.message_ids[0]
        results = await asyncio.gather(
            *(adapter.edit(setup.room, message, f"draft {i}") for i in range(1, 6))
        )
        assert all(r.ok for r in results)
    finally:
        await adapter.disconnect()
    edits = [
        e["content"]["m.new_content"]["body"]
        for e in setup.synapse.events(setup.room, setup.bot.user_id)
        if (e["content"].get("m.relates_to") or {}).get("rel_type") == "m.replace"
    ]
    assert edits == ["draft 1", "draft 5"]  # the first at once, the rest as one, the newest


async def test_a_password_login_keeps_its_device_and_its_keys_private(setup: Setup) -> None:
    first = setup.adapter(password=True)
    await first.connect(RecordingSink())
    device = first.device_id
    await first.disconnect()
    again = setup.adapter(password=True)
    await again.connect(RecordingSink())
    try:
        assert again.device_id == device  # the same device: its Olm keys still hold
        assert (await again.verification())["device"] == device
    finally:
        await again.disconnect()
    assert stat.S_IMODE(setup.store.stat().st_mode) == 0o700
    for name in ("store.db", "pickle.key", "sync.json"):
        assert stat.S_IMODE((setup.store / name).stat().st_mode) == 0o600, name


def turn_encryption_on(setup: Setup) -> None:
    """The owner's client turns on encryption in the room (a state event)."""
    room = urllib.parse.quote(setup.room)
    setup.synapse.request(
        "PUT",
        f"/_matrix/client/v3/rooms/{room}/state/m.room.encryption/",
        {"algorithm": "m.megolm.v1.aes-sha2"},
        token=setup.owner.access_token,
    )


async def test_a_room_encrypted_between_a_sync_and_a_send_gets_no_plaintext(
    setup: Setup,
) -> None:
    """The owner turns encryption on while Herald's sync hears nothing (the proxy holds
    it): Herald still believes the room unencrypted, and what it sends next (a message, an
    edit, a voice note) reaches the homeserver encrypted, read from Synapse's database."""
    proxy = SynapseProxy(setup.synapse.url, setup.bot.user_id).start()
    adapter = setup.adapter(homeserver=proxy.url)
    await adapter.connect(RecordingSink())
    try:
        await synced(adapter)
        before = await adapter.send(setup.room, "before WORD-plain")  # the room is plain
        assert before.ok
        proxy.silence(True)  # no sync answers from here on
        turn_encryption_on(setup)
        assert (await adapter.send(setup.room, "after WORD-secret")).ok
        assert (await adapter.edit(setup.room, before.message_ids[0], "edited WORD-secret")).ok
        voice = OutgoingFile("reply.mp3", VOICE_BYTES, "audio/mpeg", voice=True)
        assert (await adapter.send_file(setup.room, voice)).ok
    finally:
        await adapter.disconnect()
        proxy.stop()
    events = setup.synapse.events(setup.room)
    turned = next(i for i, e in enumerate(events) if e["type"] == "m.room.encryption")
    after = [e for e in events[turned:] if e["sender"] == setup.bot.user_id]
    assert [e["type"] for e in after] == ["m.room.encrypted"] * 3
    assert "WORD-secret" not in json.dumps(events)
    media = setup.synapse.root / "media" / "local_content"
    assert not any(VOICE_BYTES in p.read_bytes() for p in media.rglob("*") if p.is_file())


async def test_a_room_encrypted_between_an_upload_and_its_event_gets_the_file_encrypted(
    setup: Setup,
) -> None:
    """The file went up in the clear while the room was plain, and the room is encrypted
    before the event that shows it is sent: the event must not point at that plaintext
    upload; the file goes up again, encrypted, and the (encrypted) event carries its key."""
    proxy = SynapseProxy(setup.synapse.url, setup.bot.user_id).start()
    adapter = setup.adapter(homeserver=proxy.url)
    await adapter.connect(RecordingSink())
    try:
        await synced(adapter)
        proxy.silence(True)
        proxy.after_next_upload(lambda: turn_encryption_on(setup))
        sent = await adapter.send_file(setup.room, OutgoingFile("notes.txt", REPORT, "text/plain"))
        assert sent.ok
        (event,) = [
            e for e in setup.synapse.events(setup.room) if e["event_id"] in sent.message_ids
        ]
        assert event["type"] == "m.room.encrypted"
        assert adapter._crypto is not None
        shown = await adapter._crypto.decrypt({**event, "room_id": setup.room})  # its own key
    finally:
        await adapter.disconnect()
        proxy.stop()
    assert shown is not None and "url" not in shown["content"]
    info = shown["content"]["file"]
    stored = setup.synapse.media(info["url"])
    assert REPORT not in stored
    assert decrypt_attachment(stored, info["key"]["k"], info["hashes"]["sha256"], info["iv"]) == (
        REPORT
    )
