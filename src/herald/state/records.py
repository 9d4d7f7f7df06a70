"""Immutable records handed out by the state store (one per table row)."""

from __future__ import annotations

import copy
import json
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any

from herald.providers.base import ToolCall
from herald.providers.message import Message


@dataclass(frozen=True)
class SessionRecord:
    """One row of `sessions`, with `meta` parsed from JSON."""

    id: str
    profile: str
    source: str
    title: str | None
    model: str | None
    provider: str | None
    parent_id: str | None
    created_at: float
    updated_at: float
    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    api_calls: int
    estimated_cost_usd: float
    last_exit_reason: str | None
    system_prompt_hash: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    identity: str = "owner"  # whose conversation this is (invariant 19)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SessionRecord:
        return cls(
            id=row["id"],
            profile=row["profile"],
            source=row["source"],
            title=row["title"],
            model=row["model"],
            provider=row["provider"],
            parent_id=row["parent_id"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            prompt_tokens=row["prompt_tokens"],
            completion_tokens=row["completion_tokens"],
            cache_read_tokens=row["cache_read_tokens"],
            cache_write_tokens=row["cache_write_tokens"],
            reasoning_tokens=row["reasoning_tokens"],
            api_calls=row["api_calls"],
            estimated_cost_usd=row["estimated_cost_usd"],
            last_exit_reason=row["last_exit_reason"],
            system_prompt_hash=row["system_prompt_hash"],
            meta=json.loads(row["meta"]) if row["meta"] else {},
            identity=row["identity"],
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StoredMessage:
    """One row of `messages`. `content` is the clean text shown to users and
    searched; `api_content`, when set, is what the model was actually sent."""

    id: int
    session_id: str
    seq: int
    position: float
    role: str
    content: str | None
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    tool_name: str | None
    reasoning: str | None
    api_content: str | None
    active: bool
    compacted: bool
    created_at: float
    # owner | trusted | untrusted:<source> (herald.safety.provenance)
    provenance: str = "trusted"

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StoredMessage:
        raw_calls = row["tool_calls"]
        return cls(
            id=row["id"],
            session_id=row["session_id"],
            seq=row["seq"],
            position=row["position"],
            role=row["role"],
            content=row["content"],
            tool_calls=json.loads(raw_calls) if raw_calls else None,
            tool_call_id=row["tool_call_id"],
            tool_name=row["tool_name"],
            reasoning=row["reasoning"],
            api_content=row["api_content"],
            active=bool(row["active"]),
            compacted=bool(row["compacted"]),
            created_at=row["created_at"],
            provenance=row["provenance"],
        )

    def to_api(self) -> dict[str, Any]:
        """The OpenAI-chat message to send to a model (no ids, no reasoning)."""
        message: dict[str, Any] = {
            "role": self.role,
            "content": self.api_content if self.api_content is not None else self.content,
        }
        if self.tool_calls:
            message["tool_calls"] = copy.deepcopy(self.tool_calls)
        if self.role == "tool" and self.tool_call_id is not None:
            message["tool_call_id"] = self.tool_call_id
        return message

    def to_message(self) -> Message:
        """This row as the engine's `Message`: `row_id` set, `to_api()` equal to ours."""
        return Message(
            role=self.role,
            content=self.content,
            tool_calls=tuple(ToolCall.from_message_dict(c) for c in self.tool_calls or ()),
            tool_call_id=self.tool_call_id,
            name=self.tool_name,
            api_content=self.api_content,
            row_id=self.id,
            provenance=self.provenance,
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-safe, for export."""
        return asdict(self)


@dataclass(frozen=True)
class SearchHit:
    """One full-text match. `rank` sorts ascending (best first): FTS5 bm25
    scores are negative; substring-fallback hits (CJK) rank 0.0."""

    message_id: int
    session_id: str
    role: str
    snippet: str
    rank: float
    created_at: float
    active: bool

    @property
    def id(self) -> int:
        return self.message_id


@dataclass(frozen=True)
class UsageRecord:
    """One model call's reported usage (a row of `usage`)."""

    id: int
    session_id: str
    created_at: float
    provider: str
    model: str
    api_mode: str
    kind: str
    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_usd: float
    duration_ms: int
    finish_reason: str | None
    # What the request carried, by part (bytes); they sum to request_bytes.
    request_bytes: int = 0
    system_bytes: int = 0
    tools_bytes: int = 0
    history_bytes: int = 0
    new_bytes: int = 0
    prefix_break: str | None = None  # why the reused prefix broke, when it did

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> UsageRecord:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
