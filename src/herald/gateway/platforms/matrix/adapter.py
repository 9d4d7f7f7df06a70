"""Matrix through mautrix: a bot account's /sync long poll in, the client-server API out,
end-to-end encrypted rooms through mautrix's Olm machine.

Herald runs its own sync loop over mautrix's `sync` and `handle_sync` (which keep the
state store and the Olm machine current): every timeline event of a response is
decrypted if need be, recorded in the inbound ledger by its event id and handed to the
gateway, in order, before the sync token is saved; a replay after a restart is
answered once. The first sync of a new store only catches up (history is not answered).

Every event Herald sends goes through one gate, `_put`, which seals it
(`crypto.RoomCrypto.seal`): plaintext only into rooms that are not encrypted; in an
encrypted room the event is Megolm-encrypted or not sent at all.

Rooms and DMs: a room of two (Herald and one person) is a DM and always answered; in
other rooms Herald answers a mention, a reply to it, or a thread it answered in
(`require_mention`). A thread (``m.thread``) is a session and Herald answers in it.
Approvals are reactions on the prompt, counted only on the newest prompt of that room
and thread, so a reaction answers the request it was put on. Streaming edits
(``m.replace``) are sent at most once per `edit_interval_seconds` per message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.gateway.aio import end_task
from herald.gateway.approvals import reaction_choices
from herald.gateway.auth import allowlist_matches
from herald.gateway.contracts import (
    Button,
    EventSink,
    InboundFile,
    MessageEvent,
    OutgoingFile,
    PlatformAdapter,
    SendResult,
)
from herald.gateway.health import Rhythm
from herald.gateway.platforms.matrix.config import MatrixSecrets
from herald.gateway.platforms.matrix.crypto import (
    CannotEncrypt,
    RoomCrypto,
    RoomTurnedEncrypted,
    start_machine,
)
from herald.gateway.platforms.matrix.events import Incoming, parse_message, parse_reaction
from herald.gateway.platforms.matrix.format import with_html
from herald.gateway.platforms.matrix.media import save_media, upload_content
from herald.gateway.platforms.matrix.stores import (
    SyncPosition,
    open_database,
    pickle_key,
    prepare_folder,
)

if TYPE_CHECKING:
    from herald.config.schema_matrix import MatrixPlatformConfig

log = logging.getLogger(__name__)

MATRIX_MAX_MESSAGE = 16000  # well under the 64 KiB event limit, with room for encryption
_KEPT = 200
_FIRST_BACKOFF = 0.2
_NOTICE_EVERY = 3600.0
_VERIFICATION_EVERY = 300.0
UNREADABLE = (
    "🔒 I could not decrypt your message: its room key never reached this device. "
    "Please send it again."
)
_NOTICE = (
    "Herald could not encrypt a reply for this room, so it was not sent. "
    "The owner can see why in Herald's gateway log."
)


class MatrixConnectError(RuntimeError):
    """The homeserver refused the login or could not be reached at start-up."""


@dataclass(frozen=True)
class _Prompt:
    room: str
    thread: str | None
    choices: dict[str, str]


class MatrixAdapter(PlatformAdapter):
    name = "matrix"
    push_replies = True

    def __init__(
        self,
        config: MatrixPlatformConfig,
        secrets: MatrixSecrets,
        *,
        store_dir: Path,
        attachments_dir: Path | None = None,
        silence_slack: float = 15.0,
        drain_timeout: float = 10.0,
    ) -> None:
        self.config = config
        self._secrets = secrets
        self._store_dir = store_dir
        self._attachments_dir = attachments_dir
        self._silence_slack = silence_slack
        self._drain_timeout = drain_timeout
        self._client: Any = None
        self._crypto: RoomCrypto | None = None
        self._databases: list[Any] = []
        self._position: SyncPosition | None = None
        self._sync: asyncio.Task[None] | None = None
        self._sink: EventSink | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._display_name: str | None = None
        self.user_id: str = secrets.user_id
        self.device_id: str | None = None
        self._prompts: OrderedDict[str, _Prompt] = OrderedDict()  # prompt event -> choices
        self._own: OrderedDict[str, None] = OrderedDict()  # events Herald sent
        self._threads: OrderedDict[str, None] = OrderedDict()  # threads Herald answered in
        self._edits: dict[str, tuple[asyncio.Lock, list[Any]]] = {}  # message -> (lock, state)
        self._noticed: dict[str, float] = {}
        self._verified_at = time.monotonic()  # _open describes it first

    # ---- lifecycle --------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        if self._client is not None:
            raise RuntimeError("the Matrix adapter is already connected")
        self._sink = sink
        try:
            await self._open()
        except BaseException:
            await self._close_client()
            raise
        self.health.connected()
        self._sync = asyncio.get_running_loop().create_task(self._sync_loop(), name="matrix:sync")

    async def _open(self) -> None:
        from mautrix.api import HTTPAPI
        from mautrix.client import Client
        from mautrix.client.state_store.asyncpg import PgStateStore
        from mautrix.errors import MatrixRequestError

        folder = prepare_folder(self._store_dir)
        self._position = SyncPosition.load(folder)
        api = HTTPAPI(base_url=self._secrets.homeserver, token=self._secrets.access_token or "")
        database = await open_database(folder / "store.db", PgStateStore.upgrade_table)
        self._databases.append(database)
        state_store = PgStateStore(database)
        client = Client(mxid=self.user_id, api=api, state_store=state_store)
        self._client = client
        try:
            await self._login(client)
        except MatrixRequestError as exc:
            raise MatrixConnectError(f"the homeserver refused the login: {exc}") from None
        except (TimeoutError, OSError) as exc:
            raise MatrixConnectError(
                f"cannot reach the homeserver at {self._secrets.homeserver}: {exc}"
            ) from None
        except Exception as exc:
            if type(exc).__module__.startswith("aiohttp"):
                raise MatrixConnectError(
                    f"cannot reach the homeserver at {self._secrets.homeserver}: {exc}"
                ) from None
            raise
        machine = None
        if self.config.encryption:
            machine = await self._start_crypto(client, folder, database, state_store)
        self._crypto = RoomCrypto(client, machine, state_store)
        with contextlib.suppress(Exception):
            self._display_name = await client.get_displayname(client.mxid)
        self.health.describe(await self._crypto.verification())

    async def _login(self, client: Any) -> None:
        from mautrix.types import UserID

        position = self._position
        assert position is not None
        if self._secrets.access_token:
            who = await client.whoami()
            if who.user_id != self.user_id:
                raise MatrixConnectError(
                    f"the access token belongs to {who.user_id}, not to "
                    f"gateway.platforms.matrix.user_id ({self.user_id})"
                )
            client.device_id = who.device_id
        else:
            answer = await client.login(
                identifier=UserID(self.user_id),
                password=self._secrets.password,
                device_id=position.device_id,  # the same device again: its keys stay valid
                device_name=self.config.device_name,
            )
            client.device_id = answer.device_id
        self.device_id = str(client.device_id)
        if position.device_id and position.device_id != self.device_id:
            position.next_batch = None  # a new device starts with a fresh sync
        position.device_id = self.device_id
        position.save()

    async def _start_crypto(
        self, client: Any, folder: Path, database: Any, state_store: Any
    ) -> Any:
        from mautrix.crypto import PgCryptoStore

        # One database: the crypto store reads the state store's member tables.
        await PgCryptoStore.upgrade_table.upgrade(database)
        store = PgCryptoStore(account_id=self.user_id, pickle_key=pickle_key(folder), db=database)
        await store.open()
        stored = await store.get_device_id()
        if stored and stored != client.device_id:
            # A new access token with a new device: the old device's keys cannot serve it.
            log.warning("matrix: the device changed (%s -> %s); new keys", stored, client.device_id)
            await store.delete()
        await store.put_device_id(client.device_id)
        return await start_machine(client, store, state_store)

    async def reconnect(self, sink: EventSink) -> None:
        """A new sync loop on the same client; turns in flight keep sending through it."""
        self._sink = sink
        if self._client is None:
            await self.connect(sink)
            return
        self.health.reconnecting("starting a new sync")
        await self._stop_sync()
        self._sync = asyncio.get_running_loop().create_task(self._sync_loop(), name="matrix:sync")

    async def disconnect(self) -> None:
        await self._stop_sync()
        pending = {task for task in self._tasks if not task.done()}
        if pending:
            _, late = await asyncio.wait(pending, timeout=self._drain_timeout)
            for task in late:
                task.cancel()
        await self._close_client()
        self.health.stopped()

    async def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.api.session.close()
        databases, self._databases = self._databases, []
        for database in databases:
            with contextlib.suppress(Exception):
                await database.stop()

    async def _stop_sync(self) -> None:
        sync, self._sync = self._sync, None
        if sync is not None:
            await end_task(sync)

    def expected_rhythm(self) -> Rhythm:
        return Rhythm.long_poll(self.config.sync_timeout_seconds, self._silence_slack)

    # ---- capabilities -----------------------------------------------------------------

    def max_message_length(self, chat_id: str) -> int:
        return MATRIX_MAX_MESSAGE

    def supports_edits(self) -> bool:
        return True

    def supports_buttons(self) -> bool:
        return True  # reactions on the prompt

    def supports_threads(self) -> bool:
        return True

    def supports_files(self) -> bool:
        return True

    # ---- input ------------------------------------------------------------------------

    async def _sync_loop(self) -> None:
        backoff = _FIRST_BACKOFF
        timeout_ms = int(self.config.sync_timeout_seconds * 1000)
        while True:
            client, position = self._client, self._position
            assert client is not None and position is not None
            try:
                data = await client.sync(since=position.next_batch, timeout=timeout_ms)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.health.error(f"sync: {exc}")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            backoff = _FIRST_BACKOFF
            self.health.received()
            catching_up = position.next_batch is None
            await self._take_sync(client, data, catching_up)
            position.next_batch = data.get("next_batch") or position.next_batch
            position.save()
            await self._refresh_verification()

    async def _refresh_verification(self) -> None:
        """The device's verification state for `herald gateway status`, again every few
        minutes: the owner may have verified or cross-signed it meanwhile."""
        now = time.monotonic()
        if self._crypto is None or now - self._verified_at < _VERIFICATION_EVERY:
            return
        self._verified_at = now
        self.health.describe(await self._crypto.verification())

    async def _take_sync(self, client: Any, data: dict[str, Any], catching_up: bool) -> None:
        tasks = client.handle_sync(data)  # the state store and the Olm machine
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        rooms = data.get("rooms") or {}
        for room_id, room in (rooms.get("invite") or {}).items():
            await self._invited(room_id, room)
        for room_id, room in (rooms.get("join") or {}).items():
            for raw in self._since_joining((room.get("timeline") or {}).get("events") or []):
                raw["room_id"] = room_id
                try:
                    await self._take(raw, catching_up)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("matrix: an event in %s could not be handled", room_id)

    def _since_joining(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A room's timeline from Herald's own join on, when the join is in it: the first
        sync of a newly joined room brings recent history, said before Herald was there."""
        for index in range(len(events) - 1, -1, -1):
            event = events[index]
            if (
                event.get("type") == "m.room.member"
                and event.get("state_key") == self.user_id
                and (event.get("content") or {}).get("membership") == "join"
                and ((event.get("unsigned") or {}).get("prev_content") or {}).get("membership")
                != "join"  # a profile change is a join event too
            ):
                return events[index + 1 :]
        return events

    async def _invited(self, room_id: str, room: dict[str, Any]) -> None:
        events = (room.get("invite_state") or {}).get("events") or []
        inviter = next(
            (
                e.get("sender")
                for e in events
                if e.get("type") == "m.room.member" and e.get("state_key") == self.user_id
            ),
            None,
        )
        if not self.config.auto_join or not inviter or not self._allowed(str(inviter)):
            log.info("matrix: not joining %s (invited by %s)", room_id, inviter)
            return
        from mautrix.types import RoomID

        try:
            await self._client.join_room_by_id(RoomID(room_id))
        except Exception as exc:
            self.health.error(f"join {room_id}: {exc}")

    def _allowed(self, user_id: str) -> bool:
        probe = MessageEvent(platform=self.name, chat_id="", user_id=user_id, text="")
        return allowlist_matches([str(u) for u in self.config.allowed_users], probe)

    async def _take(self, raw: dict[str, Any], catching_up: bool) -> None:
        if raw.get("sender") == self.user_id or "state_key" in raw:
            return
        if raw.get("type") == "m.room.encrypted":
            assert self._crypto is not None
            decrypted = await self._crypto.decrypt(raw)
            if decrypted is None:
                if not catching_up:
                    await self._unreadable(raw)
                return
            raw = {**decrypted, "room_id": raw["room_id"]}
        if catching_up:
            return  # history from before Herald's first sync is not answered
        if raw.get("type") == "m.reaction":
            await self._take_reaction(raw)
        elif raw.get("type") == "m.room.message":
            message = parse_message(raw, self.user_id, self._display_name)
            if message is not None:
                await self._take_message(message, raw)

    async def _unreadable(self, raw: dict[str, Any]) -> None:
        """An allowed user's message Herald could not decrypt is not dropped in silence:
        they are told (encrypted, like any reply) to send it again."""
        sender, event_id = str(raw.get("sender")), str(raw.get("event_id"))
        if not self._allowed(sender) or self.record_event(self._sink, event_id) == "seen":
            return
        relation = (raw.get("content") or {}).get("m.relates_to") or {}
        thread = relation.get("event_id") if relation.get("rel_type") == "m.thread" else None
        await self.send(str(raw["room_id"]), UNREADABLE, reply_to=event_id, thread_id=thread)

    async def _is_dm(self, room_id: str) -> bool:
        from mautrix.types import RoomID

        room = RoomID(room_id)
        store = self._client.state_store
        if not await store.has_full_member_list(room):
            with contextlib.suppress(Exception):
                await self._client.get_joined_members(room)
        members = await store.get_members(room)
        return len(members) <= 2

    async def _take_message(self, message: Incoming, raw: dict[str, Any]) -> None:
        private = await self._is_dm(message.room_id)
        addressed = (
            message.mentioned
            or (message.reply_to is not None and message.reply_to in self._own)
            or (message.thread_root is not None and message.thread_root in self._threads)
        )
        if not private and self.config.require_mention and not addressed:
            return
        if self.record_event(self._sink, message.event_id) == "seen":
            return
        media: tuple[str, ...] = ()
        files: tuple[InboundFile, ...] = ()
        if message.media is not None:
            # Only an allowed user's file is downloaded (decrypted first, when it came
            # encrypted) and saved; the gateway's media path makes photos images and
            # voice notes transcripts (herald.gateway.media).
            folder = self._attachments_dir if self._allowed(message.sender) else None
            note, saved = await save_media(self._client, message.media, folder, self._max_bytes)
            media, files = (note,), (() if saved is None else (saved,))
        event = MessageEvent(
            platform=self.name,
            chat_id=message.room_id,
            user_id=message.sender,
            text=message.text,
            chat_type="private" if private else "group",
            thread_id=message.thread_root,
            message_id=message.event_id,
            reply_to=message.reply_to,
            media=media,
            files=files,
            event_id=message.event_id,
            raw=raw,
        )
        self.spawn_dispatch(self._sink, event, self._tasks)

    @property
    def _max_bytes(self) -> int:
        return int(self.config.max_attachment_mb * 1024 * 1024)

    async def _take_reaction(self, raw: dict[str, Any]) -> None:
        found = parse_reaction(raw)
        if found is None:
            return
        target, key = found
        prompt = self._prompts.get(target)
        room = str(raw.get("room_id"))
        if prompt is None or prompt.room != room:
            return  # a reaction to anything else is just a reaction
        command = prompt.choices.get(key.replace("\ufe0f", ""))
        if command is None:
            return
        event_id = str(raw.get("event_id"))
        if self.record_event(self._sink, event_id) == "seen":
            return
        event = MessageEvent(
            platform=self.name,
            chat_id=room,
            user_id=str(raw.get("sender")),
            text=command,
            chat_type="private" if await self._is_dm(room) else "group",
            thread_id=prompt.thread,
            reply_to=target,
            event_id=event_id,
            raw=raw,
        )
        self.spawn_dispatch(self._sink, event, self._tasks)

    # ---- output -----------------------------------------------------------------------

    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        choices: dict[str, str] = {}
        if buttons:
            choices, how = reaction_choices(buttons)
            text = f"{text}\n\n{how}"
        content = with_html({"msgtype": "m.text", "body": text, "m.mentions": {}}, text)
        _relate(content, reply_to, thread_id)
        result = await self._put(chat_id, content)
        if result.ok:
            self._remember_sent(result.message_ids[0], thread_id)
            if choices:
                self._new_prompt(result.message_ids[0], _Prompt(chat_id, thread_id, choices))
        return result

    async def send_file(
        self,
        chat_id: str,
        file: OutgoingFile,
        *,
        caption: str | None = None,
        reply_to: str | None = None,
        thread_id: str | None = None,
    ) -> SendResult:
        """The file uploaded to the media repository (encrypted first, in an encrypted
        room: the homeserver stores only ciphertext) and posted as an ``m.file`` (or image,
        audio, video) event with the caption as its body. A room encrypted between a
        plaintext upload and its event gets the file uploaded again, encrypted: the
        event never points an encrypted room at a plaintext copy."""
        if self._client is None or self._crypto is None:
            return SendResult(ok=False, error="the Matrix adapter is not connected")
        try:
            encrypted = await self._crypto.room_encrypted(chat_id)
        except CannotEncrypt as exc:
            return await self._refused(chat_id, exc)
        while True:  # twice at most: once the upload is encrypted, it stays so
            if encrypted and self._crypto.machine is None:
                off = CannotEncrypt("the room is encrypted and encryption is off")
                return await self._refused(chat_id, off)
            try:
                content = await upload_content(self._client, file, caption, encrypted=encrypted)
            except Exception as exc:
                self.health.error(f"file upload: {exc}")
                return SendResult(ok=False, permanent_failure=_permanent(exc), error=str(exc))
            _relate(content, reply_to, thread_id)
            try:
                result = await self._put(chat_id, content, made_for_plain=not encrypted)
            except RoomTurnedEncrypted:
                log.warning("matrix: %s turned encrypted during an upload; encrypting it", chat_id)
                encrypted = True
                continue
            break
        if result.ok:
            self._remember_sent(result.message_ids[0], thread_id)
        return result

    async def edit(self, chat_id: str, message_id: str, text: str) -> SendResult:
        """Replace a message's text (``m.replace``), at most once per
        `edit_interval_seconds`; an edit that a newer one overtook while it waited is
        folded into it. A prompt that is edited (answered) stops taking reactions."""
        self._prompts.pop(message_id, None)
        lock, state = self._edits.setdefault(message_id, (asyncio.Lock(), [0.0, None]))
        state[1] = text
        async with lock:
            if state[1] is None:
                return SendResult(ok=True, message_ids=[message_id])  # a newer edit sent it
            wait = state[0] + self.config.edit_interval_seconds - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            latest, state[1] = state[1], None
            state[0] = time.monotonic()
            new = with_html({"msgtype": "m.text", "body": latest, "m.mentions": {}}, latest)
            content = {
                "msgtype": "m.text",
                "body": f"* {latest}",
                "m.new_content": new,
                "m.relates_to": {"rel_type": "m.replace", "event_id": message_id},
                "m.mentions": {},
            }
            result = await self._put(chat_id, content)
        if len(self._edits) > _KEPT:
            self._edits.pop(next(iter(self._edits)))
        return SendResult(ok=result.ok, message_ids=[message_id], error=result.error)

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        from mautrix.types import RoomID

        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.set_typing(RoomID(chat_id), timeout=10000)

    async def _put(
        self, room_id: str, content: dict[str, Any], *, made_for_plain: bool = False
    ) -> SendResult:
        """The one way an event leaves: sealed for its room, or not sent
        (`RoomTurnedEncrypted` for content `made_for_plain` in a room now encrypted)."""
        from mautrix.types import EventType, RoomID

        client, crypto = self._client, self._crypto
        if client is None or crypto is None:
            return SendResult(ok=False, error="the Matrix adapter is not connected")
        try:
            event_type, body = await crypto.seal(
                room_id, "m.room.message", content, made_for_plain=made_for_plain
            )
        except CannotEncrypt as exc:
            return await self._refused(room_id, exc)
        kind = EventType.find(event_type, t_class=EventType.Class.MESSAGE)
        try:
            event_id = await client.send_message_event(
                RoomID(room_id), kind, body, disable_encryption=True
            )
        except Exception as exc:
            self.health.error(f"send: {exc}")
            return SendResult(ok=False, permanent_failure=_permanent(exc), error=str(exc))
        self.health.sent()
        return SendResult(ok=True, message_ids=[str(event_id)])

    async def _refused(self, room_id: str, exc: CannotEncrypt) -> SendResult:
        log.error("matrix: nothing sent to %s: %s", room_id, exc)
        self.health.error(f"not sent (encryption): {exc}")
        if self.config.notify_unencrypted_failure:
            await self._notice(room_id)
        return SendResult(ok=False, error=f"not sent: {exc}")

    async def _notice(self, room_id: str) -> None:
        """The owner's opt-in: one plaintext notice (no content of the reply) per room
        per hour, saying that a reply could not be encrypted."""
        from mautrix.types import EventType, RoomID

        now = time.monotonic()
        if now - self._noticed.get(room_id, -_NOTICE_EVERY) < _NOTICE_EVERY:
            return
        self._noticed[room_id] = now
        notice = {"msgtype": "m.notice", "body": _NOTICE, "m.mentions": {}}
        with contextlib.suppress(Exception):
            await self._client.send_message_event(
                RoomID(room_id), EventType.ROOM_MESSAGE, notice, disable_encryption=True
            )

    def _remember_sent(self, event_id: str, thread_id: str | None) -> None:
        _remember(self._own, event_id)
        if thread_id:
            _remember(self._threads, thread_id)

    def _new_prompt(self, event_id: str, prompt: _Prompt) -> None:
        """Only the newest prompt of a room and thread takes reactions: a reaction on an
        older one must not answer the request that came after it."""
        for old in [
            k
            for k, p in self._prompts.items()
            if (p.room, p.thread) == (prompt.room, prompt.thread)
        ]:
            del self._prompts[old]
        self._prompts[event_id] = prompt
        while len(self._prompts) > _KEPT:
            self._prompts.popitem(last=False)

    async def verification(self) -> dict[str, str]:
        return await self._crypto.verification() if self._crypto else {}


def _relate(content: dict[str, Any], reply_to: str | None, thread_id: str | None) -> None:
    if thread_id:
        content["m.relates_to"] = {
            "rel_type": "m.thread",
            "event_id": thread_id,
            "is_falling_back": reply_to is None,
            "m.in_reply_to": {"event_id": reply_to or thread_id},
        }
    elif reply_to and reply_to.startswith("$"):
        content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}


def _remember(store: OrderedDict[str, None], key: str) -> None:
    store[key] = None
    store.move_to_end(key)
    while len(store) > _KEPT:
        store.popitem(last=False)


def _permanent(exc: Exception) -> bool:
    """Forbidden (not in the room, banned) or an unknown room: retrying will not help."""
    status = getattr(exc, "http_status", None)
    return status in (403, 404) or getattr(exc, "errcode", "") in ("M_FORBIDDEN", "M_NOT_FOUND")


__all__ = ["MatrixAdapter", "MatrixConnectError"]
