"""End-to-end encryption for the Matrix adapter, and the one gate every event Herald
sends passes: `RoomCrypto.seal`.

The invariant: Herald never sends a plaintext event into an encrypted room. `seal`
asks whether the room is encrypted (the state store when it knows the room is; else the
room's ``m.room.encryption`` state read from the homeserver right then, every time, so a
room encrypted after Herald's last sync is not taken for a plain one) and either returns the content as it is (an unencrypted room) or Megolm-encrypted by
mautrix's `OlmMachine`. When it cannot encrypt (encryption is off, no session could be
shared, the homeserver could not say whether the room is encrypted) it raises
`CannotEncrypt` and nothing is sent. Megolm keys are shared with every device of the
room's members, verified or not (``send_keys_min_trust``), as Element does by
default; who can add a device to a member's account can read what follows.

Inbound, `decrypt` waits a little for a room key that is still on its way (to-device
messages and the room event can arrive in the same sync).
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

ENCRYPTED = "m.room.encrypted"
_KEY_WAIT_SECONDS = 10.0


class CannotEncrypt(RuntimeError):
    """The room is (or may be) encrypted and Herald cannot encrypt for it: not sent."""


class RoomTurnedEncrypted(RuntimeError):
    """The content was made for a plaintext room (a file uploaded in the clear) and the
    room is encrypted now: make it again for an encrypted room (nothing was sent)."""


class RoomCrypto:
    def __init__(self, client: Any, machine: Any | None, state_store: Any) -> None:
        self.client = client
        self.machine = machine  # None: encryption is off
        self.state_store = state_store

    async def room_encrypted(self, room_id: str) -> bool:
        """Whether `room_id` is encrypted, as the homeserver says at this moment.

        "Encrypted" is final (Matrix has no way back), so the state store's yes is kept.
        "Not encrypted" is never kept: the homeserver is asked again before every
        plaintext event, because sync may not have brought an ``m.room.encryption`` that
        is already in the room (it is on its way, or sync is stalled). Even a short cache
        of the "no" would let every send within it go out in the clear. What is left is
        the round trip between this read and the send, which no client can close: the
        homeserver accepts plaintext in any room."""
        from mautrix.errors import MNotFound
        from mautrix.types import EventType, RoomID

        if await self.state_store.is_encrypted(RoomID(room_id)):
            return True
        try:
            content = await self.client.get_state_event(RoomID(room_id), EventType.ROOM_ENCRYPTION)
        except MNotFound:
            return False
        except Exception as exc:
            raise CannotEncrypt(f"could not tell whether the room is encrypted: {exc}") from None
        await self.state_store.set_encryption_info(RoomID(room_id), content)
        return True

    async def seal(
        self,
        room_id: str,
        event_type: str,
        content: dict[str, Any],
        *,
        made_for_plain: bool = False,
    ) -> tuple[str, Any]:
        """(type, content) to send: as given in an unencrypted room, encrypted in an
        encrypted one; `CannotEncrypt` otherwise. Content `made_for_plain` (it points at
        a plaintext upload) is never encrypted as it is: `RoomTurnedEncrypted`."""
        from mautrix.types import EventType, RoomID

        if event_type == ENCRYPTED:
            raise CannotEncrypt("refusing to pass on an event that claims to be encrypted")
        if not await self.room_encrypted(room_id):
            return event_type, content
        if made_for_plain:
            raise RoomTurnedEncrypted(room_id)
        if self.machine is None:
            raise CannotEncrypt(
                "the room is encrypted and encryption is off (gateway.platforms.matrix.encryption)"
            )
        kind = EventType.find(event_type, t_class=EventType.Class.MESSAGE)
        try:
            sealed = await self.client.encrypt(RoomID(room_id), kind, content)
        except Exception as exc:
            raise CannotEncrypt(f"encryption failed: {type(exc).__name__}: {exc}") from None
        return ENCRYPTED, sealed

    async def decrypt(self, raw: dict[str, Any]) -> dict[str, Any] | None:
        """The decrypted event as a dict (with ``herald_encrypted`` set), or None."""
        if self.machine is None:
            log.warning("matrix: an encrypted event arrived and encryption is off; ignored")
            return None
        from mautrix.errors import DecryptionError, SessionNotFound
        from mautrix.types import EncryptedEvent

        try:
            event = EncryptedEvent.deserialize(raw)
        except Exception as exc:
            log.warning("matrix: a malformed encrypted event was ignored: %s", exc)
            return None
        try:
            decrypted = await self.machine.decrypt_megolm_event(event)
        except SessionNotFound:
            content = event.content
            if not await self.machine.wait_for_session(
                event.room_id, content.session_id, timeout=_KEY_WAIT_SECONDS
            ):
                log.warning("matrix: no room key for %s; not decrypted", event.event_id)
                return None
            try:
                decrypted = await self.machine.decrypt_megolm_event(event)
            except DecryptionError as exc:
                log.warning("matrix: could not decrypt %s: %s", event.event_id, exc)
                return None
        except DecryptionError as exc:
            log.warning("matrix: could not decrypt %s: %s", event.event_id, exc)
            return None
        body = decrypted.serialize()
        body["herald_encrypted"] = True
        return body

    async def verification(self) -> dict[str, str]:
        """This device's verification state, for `herald gateway status`."""
        device = str(getattr(self.client, "device_id", "") or "")
        if self.machine is None:
            return {"device": device, "encryption": "off"}
        from mautrix.types import TrustState

        state = {"device": device, "encryption": "on"}
        try:
            own = self.machine.own_identity
            state["fingerprint"] = str(own.signing_key)
            keys = await self.machine.get_own_cross_signing_public_keys()
            if keys is None:
                state["cross_signing"] = "not set up"
                state["trust"] = "unverified (no cross-signing)"
            else:
                trust = await self.machine.resolve_trust(own)
                signed = trust >= TrustState.CROSS_SIGNED_UNTRUSTED
                state["cross_signing"] = "set up"
                state["trust"] = (
                    f"cross-signed ({trust})" if signed else "unverified (not cross-signed)"
                )
        except Exception as exc:  # a status line must not take the adapter down
            log.warning("matrix: no verification state: %r", exc)
            state["trust"] = f"unknown ({type(exc).__name__})"
        return state


async def start_machine(client: Any, crypto_store: Any, state_store: Any) -> Any:
    """mautrix's Olm machine on `crypto_store`, its keys published."""
    from mautrix.crypto import OlmMachine
    from mautrix.types import TrustState

    machine = OlmMachine(client, crypto_store, state_store)
    machine.send_keys_min_trust = TrustState.UNVERIFIED
    machine.share_keys_min_trust = TrustState.CROSS_SIGNED_TOFU
    await machine.load()
    client._crypto = machine  # not the setter: Herald decrypts in its own sync loop
    await machine.share_keys()
    return machine


__all__ = ["ENCRYPTED", "CannotEncrypt", "RoomCrypto", "RoomTurnedEncrypted", "start_machine"]
