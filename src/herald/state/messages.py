"""Turning OpenAI-chat-shaped message dicts into validated `messages` row values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from herald.safety.provenance import OWNER, TRUSTED, check_provenance

ROLES = frozenset({"system", "user", "assistant", "tool"})

# Keys a caller may pass. Anything else is rejected rather than dropped, so a
# field the caller believes is persisted never silently disappears.
_KNOWN_KEYS = frozenset(
    {
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "name",
        "tool_name",
        "reasoning",
        "reasoning_content",
        "api_content",
        "provenance",
    }
)


@dataclass(frozen=True)
class NewMessage:
    """A validated message ready to insert (JSON already encoded)."""

    role: str
    content: str | None
    tool_calls_json: str | None
    tool_call_id: str | None
    tool_name: str | None
    reasoning: str | None
    api_content: str | None
    provenance: str = "trusted"


def _optional_str(message: Mapping[str, Any], key: str) -> str | None:
    value = message.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"message field {key!r} is not valid Unicode text: {exc}") from exc
        return value
    raise ValueError(f"message field {key!r} must be a string or None, got {type(value).__name__}")


def _encode_tool_calls(raw: Any) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(call, Mapping) for call in raw):
        raise ValueError("message field 'tool_calls' must be a list of dicts")
    if not raw:
        return None
    try:
        return json.dumps([dict(call) for call in raw], ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"message field 'tool_calls' is not JSON-serializable: {exc}") from exc


def normalize_message(message: Mapping[str, Any], *, api_content: str | None = None) -> NewMessage:
    """Validate one message dict. Raises ValueError saying what is wrong."""
    if not isinstance(message, Mapping):
        raise ValueError(f"a message must be a dict, got {type(message).__name__}")
    unknown = sorted(set(message) - _KNOWN_KEYS)
    if unknown:
        raise ValueError(
            f"message has unsupported field(s) {unknown}; the state store keeps only "
            f"{sorted(_KNOWN_KEYS)}"
        )
    role = message.get("role")
    if role not in ROLES:
        raise ValueError(f"message role must be one of {sorted(ROLES)}, got {role!r}")
    content = _optional_str(message, "content")
    tool_call_id = _optional_str(message, "tool_call_id")
    if role == "tool" and not tool_call_id:
        raise ValueError("a tool message needs the 'tool_call_id' of the call it answers")
    tool_name = _optional_str(message, "tool_name") or _optional_str(message, "name")
    reasoning = _optional_str(message, "reasoning") or _optional_str(message, "reasoning_content")
    if api_content is None:
        api_content = _optional_str(message, "api_content")
    else:
        api_content = _optional_str({"api_content": api_content}, "api_content")
    if api_content == content:
        api_content = None  # the sidecar exists only when the API copy differs
    provenance = _optional_str(message, "provenance")
    if provenance is None:  # unlabelled: a user row is the owner's words, the rest Herald's
        provenance = OWNER if role == "user" else TRUSTED
    return NewMessage(
        role=role,
        content=content,
        tool_calls_json=_encode_tool_calls(message.get("tool_calls")),
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        reasoning=reasoning,
        api_content=api_content,
        provenance=check_provenance(provenance),
    )
