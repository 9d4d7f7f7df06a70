"""What a WhatsApp Cloud API webhook carries, as plain records.

One delivery (``{"object": "whatsapp_business_account", "entry": [{"changes": [{"field":
"messages", "value": …}]}]}``) may hold messages from people and status updates of
Herald's own messages (sent, delivered, read, failed). Only changes for Herald's own
phone number id are read; anything else in the delivery is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MEDIA_TYPES = ("image", "document", "audio", "video", "sticker")


@dataclass(frozen=True)
class Inbound:
    wamid: str
    sender: str  # "+" and the wa_id digits
    name: str | None
    timestamp: float
    text: str = ""
    reply_id: str | None = None  # a pressed reply button's or list row's id
    media_id: str | None = None
    media_type: str | None = None
    media_name: str | None = None
    media_mime: str | None = None
    media_voice: bool = False  # an `audio` recorded in WhatsApp (`"voice": true`)
    context_id: str | None = None  # the wamid this one answers
    unsupported: str | None = None  # a type Herald does not read (location, contacts, …)


@dataclass(frozen=True)
class Status:
    wamid: str
    status: str  # sent | delivered | read | failed
    recipient: str
    errors: tuple[tuple[int, str], ...] = ()


def parse_delivery(payload: Any, phone_number_id: str) -> tuple[list[Inbound], list[Status]]:
    messages: list[Inbound] = []
    statuses: list[Status] = []
    if not isinstance(payload, dict):
        return messages, statuses
    for entry in _list(payload.get("entry")):
        for change in _list(entry.get("changes")):
            value = change.get("value")
            if change.get("field") != "messages" or not isinstance(value, dict):
                continue
            metadata = value.get("metadata") or {}
            if str(metadata.get("phone_number_id") or "") != phone_number_id:
                continue
            names = {
                str(c.get("wa_id")): (c.get("profile") or {}).get("name")
                for c in _list(value.get("contacts"))
            }
            for raw in _list(value.get("messages")):
                found = _message(raw, names)
                if found is not None:
                    messages.append(found)
            for raw in _list(value.get("statuses")):
                statuses.append(_status(raw))
    return messages, statuses


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _message(raw: dict[str, Any], names: dict[str, Any]) -> Inbound | None:
    sender = str(raw.get("from") or "")
    wamid = str(raw.get("id") or "")
    if not sender.isdigit() or not wamid:
        return None
    kind = str(raw.get("type") or "")
    try:
        timestamp = float(raw.get("timestamp") or 0)
    except (TypeError, ValueError):
        timestamp = 0.0
    common: dict[str, Any] = {
        "wamid": wamid,
        "sender": "+" + sender,
        "name": names.get(sender),
        "timestamp": timestamp,
        "context_id": (raw.get("context") or {}).get("id"),
    }
    if kind == "text":
        return Inbound(text=str((raw.get("text") or {}).get("body") or ""), **common)
    if kind == "interactive":
        interactive = raw.get("interactive") or {}
        reply = interactive.get("button_reply") or interactive.get("list_reply") or {}
        return Inbound(
            reply_id=str(reply.get("id") or ""), text=str(reply.get("title") or ""), **common
        )
    if kind == "button":  # a quick-reply button of a template
        button = raw.get("button") or {}
        return Inbound(text=str(button.get("text") or button.get("payload") or ""), **common)
    if kind in MEDIA_TYPES:
        media = raw.get(kind) or {}
        return Inbound(
            text=str(media.get("caption") or ""),
            media_id=str(media.get("id") or "") or None,
            media_type=kind,
            media_name=media.get("filename"),
            media_mime=media.get("mime_type"),
            media_voice=kind == "audio" and media.get("voice") is True,
            **common,
        )
    return Inbound(unsupported=kind or "unknown", **common)


def _status(raw: dict[str, Any]) -> Status:
    errors = tuple(
        (int(e.get("code") or 0), str(e.get("title") or e.get("message") or ""))
        for e in _list(raw.get("errors"))
    )
    return Status(
        wamid=str(raw.get("id") or ""),
        status=str(raw.get("status") or ""),
        recipient=str(raw.get("recipient_id") or ""),
        errors=errors,
    )


__all__ = ["MEDIA_TYPES", "Inbound", "Status", "parse_delivery"]
