"""`Message`: the one typed chat message, shared by the engine, the context engines
and the store mapping.

It lives here, in L1 (`herald.providers`), because this is the lowest layer every
user of it may import: transports (L1) convert it at `build_request`, the context
engines (L3) take and return it, the engine (L4) keeps its transcript in it. It
depends only on `ToolCall` from `herald.providers.base`, so it adds no import edge.

`to_api()` gives exactly the OpenAI-chat dict the store's `StoredMessage.to_api()`
gives for the same row (the bytes a resumed session sends equal the live ones):
`api_content` wins over `content`, `tool_calls` only when there are some,
`tool_call_id` only on tool results, and never `name` or the row id.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from herald.providers.base import ToolCall


@dataclass(frozen=True)
class Message:
    role: str
    content: str | list[Any] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    api_content: str | None = None  # the copy sent to the model (recall fenced on)
    row_id: int | None = None  # its row in state.db; None until stored
    # owner | trusted | untrusted:<source> (herald.safety.provenance); None until stored,
    # where an unlabelled user message is the owner's and anything else trusted.
    provenance: str | None = None

    @property
    def sent_content(self) -> str | list[Any] | None:
        """What the model is shown: `api_content` when set, else `content`."""
        return self.api_content if self.api_content is not None else self.content

    def to_api(self) -> dict[str, Any]:
        """The OpenAI-chat dict a transport sends (no row id, no name)."""
        out: dict[str, Any] = {"role": self.role, "content": self.sent_content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_message_dict() for call in self.tool_calls]
        if self.role == "tool" and self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out

    def to_store(self) -> dict[str, Any]:
        """The dict `append_message(s)` takes: the clean content plus, when set,
        `api_content`, the tool name and the tool-call id."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_message_dict() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        if self.api_content is not None:
            out["api_content"] = self.api_content
        if self.provenance is not None:
            out["provenance"] = self.provenance
        return out

    @classmethod
    def from_api(cls, data: dict[str, Any], *, row_id: int | None = None) -> Message:
        """From an OpenAI-chat dict (a request's message or a stored row's `to_api()`)."""
        if "role" not in data:
            raise ValueError(f"a message needs a role; got keys {sorted(data)}")
        raw_calls = data.get("tool_calls") or ()
        return cls(
            role=data["role"],
            content=data.get("content"),
            tool_calls=tuple(ToolCall.from_message_dict(c) for c in raw_calls),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            api_content=data.get("api_content"),
            row_id=row_id,
            provenance=data.get("provenance"),
        )

    def with_row(self, row_id: int | None) -> Message:
        return replace(self, row_id=row_id)

    def evolve(self, **changes: Any) -> Message:
        """A copy with `changes` applied; a changed message is a new row (no row id)
        unless `row_id` is among the changes."""
        changes.setdefault("row_id", None)
        return replace(self, **changes)


def to_api_messages(messages: Iterable[Message | dict[str, Any]]) -> list[dict[str, Any]]:
    """API dicts for a request; dicts pass through unchanged (system prompts and
    callers that still build plain dicts)."""
    return [m.to_api() if isinstance(m, Message) else m for m in messages]


def from_api_messages(messages: Iterable[dict[str, Any] | Message]) -> list[Message]:
    return [m if isinstance(m, Message) else Message.from_api(m) for m in messages]
