"""What the fake server answers with: scripted replies and injected faults.

`Reply` and `Fault` are API-neutral; the wire modules render them in the shape
of whichever API the client called.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TEXT = "(fake) done"


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call in a reply.

    A ``str`` ``arguments`` is sent verbatim (so a test can send invalid JSON);
    a dict is JSON-encoded. ``id=None`` gets a fresh id in the called API's style
    (``call_…`` for OpenAI, ``toolu_…`` for Anthropic).
    """

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        """The arguments as the JSON text a model would emit."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)

    @classmethod
    def coerce(cls, value: ToolCallSpec | Mapping[str, Any]) -> ToolCallSpec:
        """Accept a spec or a ``{"name", "arguments", "id"}`` mapping."""
        if isinstance(value, ToolCallSpec):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - {"name", "arguments", "id"}
            if unknown or "name" not in value:
                raise ValueError(
                    f"a tool call needs 'name' and may have 'arguments' and 'id'; got keys {sorted(value)}"
                )
            return cls(str(value["name"]), value.get("arguments", {}), value.get("id"))
        raise TypeError(f"expected ToolCallSpec or mapping, got {type(value).__name__}")


@dataclass(frozen=True)
class FakeUsage:
    """Token usage to report.

    ``prompt_tokens`` is the whole prompt including cached parts (OpenAI's
    meaning). On the Anthropic wire ``input_tokens`` is reported as
    ``prompt_tokens - cache_read_tokens - cache_write_tokens``, so the Anthropic
    total (input + cache read + cache write) equals ``prompt_tokens``.
    ``completion_tokens`` includes ``reasoning_tokens``.
    """

    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.prompt_tokens - self.cache_read_tokens - self.cache_write_tokens)


@dataclass
class AudioScript:
    """What the speech endpoints answer (`FakeLLMServer.audio`): ``enabled=False`` makes
    them 404, as on a provider that has none."""

    transcript: str = "hello from a voice note"
    speech: bytes = b"ID3\x04fake-mp3-audio"
    enabled: bool = True


class Reply:
    """A successful model answer: text, tool calls, reasoning, or a mix.

    ``Reply.text(...)`` / ``Reply.tool_calls(...)`` are constructors when used on
    the class; on an instance, ``reply.text`` / ``reply.tool_calls`` are the data.
    """

    def __init__(
        self,
        text: str | None = None,
        tool_calls: Iterable[ToolCallSpec | Mapping[str, Any]] = (),
        reasoning: str | None = None,
        finish_reason: str | None = None,
        usage: FakeUsage | None = None,
        model: str | None = None,
        chunk_size: int = 8,
        chunk_delay: float = 0.0,
        delay: float = 0.0,
    ) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        if chunk_delay < 0 or delay < 0:
            raise ValueError("chunk_delay and delay must not be negative")
        # Instance attributes shadow the same-named classmethods below.
        self.text: str | None = text  # type: ignore[method-assign]
        self.tool_calls: tuple[ToolCallSpec, ...] = tuple(  # type: ignore[method-assign]
            ToolCallSpec.coerce(call) for call in tool_calls
        )
        self.reasoning = reasoning
        self.finish_reason = finish_reason
        self.usage = usage
        self.model = model
        self.chunk_size = chunk_size
        self.chunk_delay = chunk_delay
        self.delay = delay

    def _fields(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": self.tool_calls,
            "reasoning": self.reasoning,
            "finish_reason": self.finish_reason,
            "usage": self.usage,
            "model": self.model,
            "chunk_size": self.chunk_size,
            "chunk_delay": self.chunk_delay,
            "delay": self.delay,
        }

    def replace(self, **changes: Any) -> Reply:
        """A copy with some fields changed."""
        return Reply(**{**self._fields(), **changes})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Reply):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        defaults = Reply()._fields()
        shown = ", ".join(
            f"{key}={value!r}" for key, value in self._fields().items() if value != defaults[key]
        )
        return f"Reply({shown})"

    def finish_reason_or_default(self) -> str:
        if self.finish_reason:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        """A plain text answer."""
        return cls(text=text, **kw)

    @classmethod
    def tool_calls(
        cls,
        calls: Iterable[ToolCallSpec | Mapping[str, Any]],
        text: str | None = None,
        **kw: Any,
    ) -> Reply:
        """An answer that calls tools, optionally with some text before the calls."""
        return cls(text=text, tool_calls=tuple(calls), **kw)

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        id: str | None = None,
        **kw: Any,
    ) -> Reply:
        """An answer with exactly one tool call."""
        spec = ToolCallSpec(name, {} if arguments is None else arguments, id)
        return cls(tool_calls=(spec,), **kw)


FAULT_KINDS = (
    "status",
    "context_overflow",
    "timeout",
    "drop_mid_stream",
    "malformed_json",
    "empty_choices",
    "refuse_stream",
    "close_connection",
    "content_policy",
    "keepalive_stall",
)

_DROP_TEXT = (
    "This answer starts streaming normally, but the connection is cut before it "
    "finishes, so the client never sees the end of it."
)


@dataclass(frozen=True)
class Fault:
    """A failure to inject, rendered in the wire format of the API that was called.

    Build one with the classmethods (``Fault.status(429)``, ``Fault.timeout(2)``…)
    rather than the constructor.
    """

    kind: str
    status_code: int | None = None
    message: str | None = None
    retry_after: float | None = None
    error_type: str | None = None
    code_str: str | None = None
    seconds: float = 0.0
    after_chunks: int = 3
    limit: int | None = None
    tokens: int | None = None
    reply: Reply | None = None
    interval: float = 0.1
    filler: str = "comment"

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {FAULT_KINDS}")

    @classmethod
    def status(
        cls,
        code: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        error_type: str | None = None,
        code_str: str | None = None,
    ) -> Fault:
        """Any HTTP error status with the provider's error body.

        ``retry_after`` (seconds) adds a ``retry-after`` header; without it no
        such header is sent. ``error_type``/``code_str`` override the body's
        ``type``/``code`` that are otherwise chosen to match the status.
        """
        if not 400 <= code <= 599:
            raise ValueError(f"Fault.status needs a 4xx or 5xx code, got {code}")
        return cls(
            "status",
            status_code=code,
            message=message,
            retry_after=retry_after,
            error_type=error_type,
            code_str=code_str,
        )

    @classmethod
    def context_overflow(cls, limit: int | None = None, tokens: int | None = None) -> Fault:
        """400 "prompt too long"; ``limit`` defaults per API, ``tokens`` to just over it."""
        return cls("context_overflow", limit=limit, tokens=tokens)

    @classmethod
    def timeout(cls, seconds: float = 30.0) -> Fault:
        """Accept the request, say nothing for ``seconds``, then hang up."""
        if seconds < 0:
            raise ValueError("timeout seconds must not be negative")
        return cls("timeout", seconds=seconds)

    @classmethod
    def keepalive_stall(
        cls, seconds: float = 30.0, *, interval: float = 0.1, filler: str = "comment"
    ) -> Fault:
        """Answer 200 at once, then send only filler every ``interval`` seconds for
        ``seconds`` and hang up: a server that is alive on the socket but never
        answers. ``filler`` is ``"comment"`` (SSE ``: keep-alive`` lines; a
        non-streaming request gets whitespace) or ``"whitespace"`` (blank lines).
        A per-read timeout never fires on either."""
        if seconds < 0 or interval <= 0:
            raise ValueError("keepalive_stall needs seconds >= 0 and interval > 0")
        if filler not in ("comment", "whitespace"):
            raise ValueError(f"filler must be 'comment' or 'whitespace', got {filler!r}")
        return cls("keepalive_stall", seconds=seconds, interval=interval, filler=filler)

    @classmethod
    def drop_mid_stream(cls, after_chunks: int = 3, reply: Reply | None = None) -> Fault:
        """Start a 200 answer, send ``after_chunks`` content deltas, then cut the socket.

        For a non-streaming request, half of the JSON body is sent before the cut.
        ``reply`` is what would have been sent (a long-ish text by default).
        """
        if after_chunks < 0:
            raise ValueError("after_chunks must not be negative")
        return cls("drop_mid_stream", after_chunks=after_chunks, reply=reply)

    @classmethod
    def malformed_json(cls) -> Fault:
        """200 with a body (or, streaming, one event) that is not valid JSON."""
        return cls("malformed_json")

    @classmethod
    def empty_choices(cls) -> Fault:
        """200 with no choices (OpenAI) or no content blocks (Anthropic)."""
        return cls("empty_choices")

    @classmethod
    def refuse_stream(cls) -> Fault:
        """400 "streaming not supported", only for a request that asked to stream.

        A non-streaming request passes over this fault (leaving it queued) and
        gets the next queued item, so a client that falls back to a
        non-streaming call gets the scripted reply that follows.
        """
        return cls("refuse_stream")

    @classmethod
    def close_connection(cls) -> Fault:
        """Close the socket without sending any response."""
        return cls("close_connection")

    @classmethod
    def content_policy(cls, message: str | None = None) -> Fault:
        """400 content-policy / content-filter refusal."""
        return cls("content_policy", message=message)

    def drop_reply(self) -> Reply:
        """The reply a ``drop_mid_stream`` fault starts sending."""
        return self.reply if self.reply is not None else Reply.text(_DROP_TEXT)


Action = Reply | Fault


def chunk_text(text: str, size: int) -> list[str]:
    """Split ``text`` into pieces of ``size`` characters (empty text -> no pieces)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def estimate_tokens(chars: int) -> int:
    """The ~4 characters per token rule of thumb."""
    return math.ceil(chars / 4)
