"""Session keys: which conversation a message belongs to.

A key is ``agent:<profile>:<platform>:<scope>:…`` built from the profile, the
platform, the chat type and chat/thread, plus the user in groups (unless the group
shares one session, which is then one per identity: the owner's keeps its old key) —
or an explicit session hint (the API's ``user`` field, per identity as well).

Every part is encoded so that a key is made of ``[A-Za-z0-9_%~-]`` and ``:`` only:
other characters become ``%XX`` (UTF-8 bytes), so no part can contain ``/``, ``..``
or the ``:`` separator, and different inputs never give the same key. A part longer
than `MAX_PART` is replaced by ``~`` and a SHA-256 digest (``~`` never survives
encoding, so a hashed part cannot collide with a plain one). A key therefore never
becomes a path outside the home, whatever a platform sends as a chat id.
"""

from __future__ import annotations

import hashlib
import re

from herald.gateway.contracts import MessageEvent

KEY_PREFIX = "agent"
MAX_PART = 96
MAX_KEY = 640
OWNER_IDENTITY = "owner"
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_KEY_RE = re.compile(r"^agent(?::[A-Za-z0-9_%~-]{1," + str(MAX_PART) + r"}){4,8}$")


class SessionKeyError(ValueError):
    """A session key that does not have the safe shape."""


def encode_part(value: str) -> str:
    """One key part: safe characters kept, others percent-encoded, long ones hashed."""
    if value == "":
        return "~"  # hashed parts are "~" plus 40 hex digits, so this one is distinct
    encoded = "".join(
        ch if ch in _SAFE else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in value
    )
    if len(encoded) > MAX_PART:
        return "~" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:40]
    return encoded


def build_session_key(profile: str, event: MessageEvent, *, shared_groups: bool = False) -> str:
    """The key of the conversation `event` belongs to."""
    parts = [profile, event.platform]
    if event.session_hint:
        # A caller names sessions only among its own identity's: another identity's
        # hint lives under its own "as" part, so no name reaches the owner's sessions
        # (the owner's keep their old shape, so existing named sessions still resolve).
        if event.identity and event.identity != OWNER_IDENTITY:
            parts += ["as", event.identity]
        parts += ["hint", event.session_hint]
    elif event.chat_type == "private":
        parts += ["private", event.chat_id]
    else:
        parts += [event.chat_type, event.chat_id]
        if event.thread_id:
            parts += ["thread", event.thread_id]
        if event.chat_type == "group" and not shared_groups:
            parts += ["user", event.user_id]
        elif event.identity and event.identity != OWNER_IDENTITY:
            # A shared group session is shared per identity: one person's turns never
            # run in a session whose prompt and memory were built for another.
            parts += ["as", event.identity]
    key = ":".join([KEY_PREFIX, *(encode_part(p) for p in parts)])
    return validate_session_key(key)


def validate_session_key(key: str) -> str:
    """`key` if it has the safe shape, else SessionKeyError."""
    if len(key) > MAX_KEY or not _KEY_RE.match(key) or ".." in key or "/" in key:
        raise SessionKeyError(f"not a valid gateway session key: {key[:80]!r}")
    return key


__all__ = [
    "KEY_PREFIX",
    "SessionKeyError",
    "build_session_key",
    "encode_part",
    "validate_session_key",
]
