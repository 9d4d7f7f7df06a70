"""The provider contract: one transport per API shape, one normalized response.

Messages handed to a transport are always in the OpenAI chat shape
(``{"role", "content", "tool_calls", "tool_call_id"}``); each transport converts
to its own wire format in `build_request` and back to `NormalizedResponse`.
Transports never retry: one `call` is exactly one HTTP request. Retries,
credential rotation and fallback are driven by the engine through
`classify_error`.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text exactly as the model produced it

    def to_message_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @classmethod
    def from_message_dict(cls, data: dict[str, Any]) -> ToolCall:
        fn = data.get("function") or {}
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args)
        return cls(id=data.get("id", ""), name=fn.get("name", ""), arguments=args)


@dataclass
class Usage:
    """Provider-reported token usage for one call. `prompt_tokens` includes cached
    tokens (read and written) so it always measures the whole prompt."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


@dataclass
class NormalizedResponse:
    text: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str | None = None
    finish_reason: str = "stop"  # stop | tool_calls | length | content_filter | ...
    usage: Usage | None = None
    model: str | None = None
    response_id: str | None = None

    @property
    def is_empty(self) -> bool:
        return not (self.text and self.text.strip()) and not self.tool_calls


@dataclass
class StreamDelta:
    kind: Literal["text", "reasoning", "tool_call"]
    text: str


DeltaCallback = Callable[[StreamDelta], None]


@dataclass
class CallSettings:
    model: str
    max_tokens: int | None = None
    temperature: float | None = None
    timeout: float = 120.0
    stream: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


class ProviderError(Exception):
    """A failed model call, in provider-neutral terms (the transport translates SDK
    exceptions into this so `classify_error` stays a pure table)."""

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        body: str | None = None,
        kind: str | None = None,  # timeout | connection | malformed_response | empty_response
        code: str | None = None,
        error_type: str | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.body = body
        self.kind = kind
        self.code = code
        self.error_type = error_type
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return (
            f"ProviderError({self.message!r}, status={self.status}, kind={self.kind}, "
            f"code={self.code})"
        )


class CallCancelled(Exception):
    """The call was aborted because the caller's cancel event was set."""


class ProviderTransport(ABC):
    """One API shape. Instances are cheap; the SDK client is created lazily."""

    api_mode: ClassVar[str]

    def __init__(
        self,
        *,
        provider: str,
        base_url: str | None,
        api_key: str | None,
        timeout: float = 120.0,
    ):
        self.provider = provider
        self.base_url = base_url
        self.api_key = api_key
        self.timeout = timeout

    @abstractmethod
    def build_request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: CallSettings,
    ) -> dict[str, Any]:
        """The request body for this API (tools given in OpenAI function format)."""

    @abstractmethod
    def call(
        self,
        request: dict[str, Any],
        *,
        stream: bool = True,
        on_delta: DeltaCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> NormalizedResponse:
        """Exactly one HTTP request. Raises `ProviderError` or `CallCancelled`."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
