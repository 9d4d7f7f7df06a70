"""A person's own Matrix device in the tests: a second mautrix client with a crypto store
of its own, syncing with mautrix's own loop and decrypting with its own Olm machine.
It knows nothing of Herald's stores: what it can read, Herald really encrypted for it."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herald.testing.synapse import MatrixUser


@dataclass(frozen=True)
class Seen:
    sender: str
    room_id: str
    body: str
    was_encrypted: bool
    event_id: str = ""
    content: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


class SecondDevice:
    def __init__(self, homeserver: str, user: MatrixUser, folder: Path) -> None:
        self.homeserver = homeserver
        self.user = user
        self.folder = folder
        self.seen: list[Seen] = []
        self._client: Any = None
        self._db: Any = None

    async def start(self) -> SecondDevice:
        from mautrix.api import HTTPAPI
        from mautrix.client import Client
        from mautrix.client.state_store.asyncpg import PgStateStore
        from mautrix.crypto import OlmMachine, PgCryptoStore
        from mautrix.types import EventType, TrustState
        from mautrix.util.async_db import Database

        self.folder.mkdir(parents=True, exist_ok=True)
        db = Database.create(
            f"sqlite:///{self.folder / 'device.db'}", upgrade_table=PgStateStore.upgrade_table
        )
        await db.start()
        await PgCryptoStore.upgrade_table.upgrade(db)
        self._db = db
        state = PgStateStore(db)
        store = PgCryptoStore(self.user.user_id, "second-device", db)
        await store.open()
        client = Client(
            mxid=self.user.user_id,
            device_id=self.user.device_id,
            api=HTTPAPI(base_url=self.homeserver, token=self.user.access_token),
            state_store=state,
            sync_store=store,
        )
        machine = OlmMachine(client, store, state)
        machine.send_keys_min_trust = TrustState.UNVERIFIED
        await machine.load()
        await store.put_device_id(self.user.device_id)
        client.crypto = machine  # mautrix's own decryption dispatcher
        await machine.share_keys()
        client.add_event_handler(EventType.ROOM_MESSAGE, self._on_message)
        self._client = client
        client.start(None)
        return self

    async def _on_message(self, event: Any) -> None:
        meta = event.get("mautrix") if hasattr(event, "get") else None
        encrypted = bool(getattr(meta, "was_encrypted", False) or (meta or {}).get("was_encrypted"))
        self.seen.append(
            Seen(
                str(event.sender),
                str(event.room_id),
                str(event.content.body),
                encrypted,
                str(event.event_id),
                event.content.serialize(),
            )
        )

    async def say(self, room_id: str, text: str) -> str:
        """Send `text` the way Element would: encrypted, since the room is."""
        from mautrix.types import MessageType, RoomID, TextMessageEventContent

        content = TextMessageEventContent(msgtype=MessageType.TEXT, body=text)
        return str(await self._client.send_message(RoomID(room_id), content))

    async def send_file(
        self, room_id: str, name: str, mime: str, data: bytes, *, voice: bool = False
    ) -> str:
        """Send a file the way Element does in an encrypted room: the bytes encrypted
        before upload, the key in the (Megolm-encrypted) event; a voice note as
        ``m.audio`` with the MSC3245 mark."""
        from mautrix.crypto.attachments import encrypt_attachment
        from mautrix.types import EventType, RoomID

        ciphertext, info = encrypt_attachment(data)
        info.url = await self._client.upload_media(ciphertext, mime_type="application/octet-stream")
        msgtype = {"image": "m.image", "audio": "m.audio"}.get(mime.split("/")[0], "m.file")
        content: dict[str, Any] = {
            "msgtype": msgtype,
            "body": name,
            "file": info.serialize(),
            "info": {"mimetype": mime, "size": len(data)},
        }
        if voice:
            content["org.matrix.msc3245.voice"] = {}
            content["org.matrix.msc1767.audio"] = {"duration": 1000}
        room = RoomID(room_id)
        return str(await self._client.send_message_event(room, EventType.ROOM_MESSAGE, content))

    async def wait_for(self, body: str, timeout: float = 60.0) -> Seen:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            for seen in self.seen:
                if seen.body == body:
                    return seen
            await asyncio.sleep(0.1)
        raise TimeoutError(f"the second device never read {body!r}; it read {self.seen}")

    async def wait_for_text(self, part: str, timeout: float = 60.0) -> str:
        """The event id of the first message read that contains `part`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            for seen in self.seen:
                if part in seen.body:
                    return seen.event_id
            await asyncio.sleep(0.1)
        raise TimeoutError(f"the second device never read {part!r}; it read {self.seen}")

    async def stop(self) -> None:
        if self._client is not None:
            self._client.stop()
            with contextlib.suppress(Exception):
                await self._client.api.session.close()
        if self._db is not None:
            await self._db.stop()
