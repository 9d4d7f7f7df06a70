"""Matrix room events as what the gateway needs: who wrote, where (room, thread), what,
whether Herald was addressed, and which files came with it.

- A room with two joined members (Herald and one person) is a DM (``private``); any
  other room is a group.
- A thread (``m.relates_to`` with ``rel_type: m.thread``) is its own conversation: its
  root event id is the thread id, so each thread is a session, and Herald answers in it.
- Herald is addressed by an intentional mention (``m.mentions.user_ids``), its user id
  or a ``matrix.to`` link to it in the text, a reply to one of its messages, or a
  message in a thread it has answered in. The mention is taken out of the text.
- Edits (``m.replace``), notices and Herald's own events are not messages to answer.
- Display names are chosen by their owners, so they never identify anyone: the user id
  is the only name the gateway gets (allowlists and identities list user ids).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MEDIA_TYPES = {"m.image", "m.file", "m.audio", "m.video"}
TEXT_TYPES = {"m.text", "m.emote"}
VOICE_FLAG = "org.matrix.msc3245.voice"  # Element's mark on a recorded voice message


@dataclass(frozen=True)
class Media:
    name: str
    mime: str
    size: int
    url: str | None  # mxc:// of a plain upload
    encrypted_file: dict[str, Any] | None = field(default=None, repr=False)  # EncryptedFile
    voice: bool = False  # recorded as a voice message (m.audio marked as MSC3245 says)


@dataclass(frozen=True)
class Incoming:
    event_id: str
    room_id: str
    sender: str
    text: str
    thread_root: str | None
    reply_to: str | None
    mentioned: bool
    media: Media | None
    encrypted: bool


def relation(content: dict[str, Any]) -> dict[str, Any]:
    rel = content.get("m.relates_to")
    return rel if isinstance(rel, dict) else {}


def reply_target(content: dict[str, Any]) -> str | None:
    reply = relation(content).get("m.in_reply_to")
    if isinstance(reply, dict) and isinstance(reply.get("event_id"), str):
        return str(reply["event_id"])
    return None


def thread_root(content: dict[str, Any]) -> str | None:
    rel = relation(content)
    if rel.get("rel_type") == "m.thread" and isinstance(rel.get("event_id"), str):
        return str(rel["event_id"])
    return None


def strip_reply_fallback(body: str) -> str:
    """Rich replies quote the message they answer as "> " lines first; that quote is
    the other message's text, not this one's."""
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> <"):
        return body
    index = 0
    while index < len(lines) and lines[index].startswith(">"):
        index += 1
    return "\n".join(lines[index:]).lstrip("\n")


def mentions(content: dict[str, Any], own_user_id: str) -> bool:
    listed = content.get("m.mentions")
    if isinstance(listed, dict) and own_user_id in (listed.get("user_ids") or []):
        return True
    body = str(content.get("body") or "")
    formatted = str(content.get("formatted_body") or "")
    return own_user_id in body or f"matrix.to/#/{own_user_id}" in formatted


def remove_mention(text: str, own_user_id: str, display_name: str | None) -> str:
    names = [re.escape(own_user_id)]
    if display_name:
        names.append(re.escape(display_name))
    pattern = re.compile(rf"^\s*(?:{'|'.join(names)})\s*[:,]?\s*", re.I)
    text = pattern.sub("", text, count=1)
    return text.replace(own_user_id, "").strip()


def parse_message(
    raw: dict[str, Any], own_user_id: str, display_name: str | None
) -> Incoming | None:
    """An ``m.room.message`` as an `Incoming`, or None when it is not one to answer."""
    content = raw.get("content")
    if not isinstance(content, dict) or raw.get("sender") == own_user_id:
        return None
    if relation(content).get("rel_type") == "m.replace":
        return None  # an edit of an earlier message: not a new message
    msgtype = content.get("msgtype")
    media = None
    if msgtype in MEDIA_TYPES:
        info = content.get("info") if isinstance(content.get("info"), dict) else {}
        encrypted_file = content.get("file") if isinstance(content.get("file"), dict) else None
        url = content.get("url") or (encrypted_file or {}).get("url")
        name = str(content.get("filename") or content.get("body") or "attachment")
        media = Media(
            name=name,
            mime=str(info.get("mimetype") or "application/octet-stream"),
            size=int(info.get("size") or 0),
            url=str(url) if url else None,
            encrypted_file=encrypted_file,
            voice=msgtype == "m.audio" and VOICE_FLAG in content,
        )
        caption = (
            content.get("body")
            if content.get("filename") not in (None, content.get("body"))
            else ""
        )
        text = str(caption or "")
    elif msgtype in TEXT_TYPES:
        text = strip_reply_fallback(str(content.get("body") or ""))
    else:
        return None  # notices (other bots), locations, polls
    mentioned = mentions(content, own_user_id)
    if mentioned:
        text = remove_mention(text, own_user_id, display_name)
    if not text.strip() and media is None:
        return None
    return Incoming(
        event_id=str(raw.get("event_id")),
        room_id=str(raw.get("room_id")),
        sender=str(raw.get("sender")),
        text=text,
        thread_root=thread_root(content),
        reply_to=reply_target(content),
        mentioned=mentioned,
        media=media,
        encrypted=bool(raw.get("herald_encrypted")),
    )


def parse_reaction(raw: dict[str, Any]) -> tuple[str, str] | None:
    """(the event reacted to, the key) of an ``m.reaction``."""
    rel = relation(raw.get("content") or {})
    if rel.get("rel_type") != "m.annotation":
        return None
    target, key = rel.get("event_id"), rel.get("key")
    if not isinstance(target, str) or not isinstance(key, str):
        return None
    return target, key


__all__ = [
    "VOICE_FLAG",
    "Incoming",
    "Media",
    "parse_message",
    "parse_reaction",
    "relation",
    "reply_target",
    "thread_root",
]
