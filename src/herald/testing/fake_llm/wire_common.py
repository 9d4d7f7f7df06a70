"""What both wire formats share: the renderer interface, ids, usage estimates."""

from __future__ import annotations

import json
import secrets
import string
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from herald.testing.fake_llm.recording import RecordedRequest
from herald.testing.fake_llm.script import FakeUsage, Fault, Reply, estimate_tokens

_ALPHANUM = string.ascii_letters + string.digits

DEFAULT_MODEL = "fake-model"


def random_id(prefix: str, length: int = 24) -> str:
    return prefix + "".join(secrets.choice(_ALPHANUM) for _ in range(length))


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def format_seconds(seconds: float) -> str:
    """``retry-after`` value: an integer when whole, else a decimal."""
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


@dataclass(frozen=True)
class Frame:
    """One SSE event, already encoded; ``is_delta`` marks events that carry content."""

    data: bytes
    is_delta: bool = False


@dataclass(frozen=True)
class ErrorResponse:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def reply_model(reply: Reply, request: RecordedRequest) -> str:
    return reply.model or request.model or DEFAULT_MODEL


def estimate_usage(reply: Reply, request: RecordedRequest) -> FakeUsage:
    """The reply's own usage, or a plausible one from request and reply sizes."""
    if reply.usage is not None:
        return reply.usage
    body = request.body or {}
    prompt_chars = len(dumps([body.get("system"), body.get("messages"), body.get("tools")]))
    reasoning = estimate_tokens(len(reply.reasoning or ""))
    output_chars = len(reply.text or "") + sum(
        len(call.name) + len(call.arguments_json()) for call in reply.tool_calls
    )
    return FakeUsage(
        prompt_tokens=max(1, estimate_tokens(prompt_chars)),
        completion_tokens=max(1, estimate_tokens(output_chars) + reasoning),
        reasoning_tokens=reasoning,
    )


def estimate_prompt_tokens(request: RecordedRequest) -> int:
    return estimate_usage(Reply(), request).prompt_tokens


class WireFormat(ABC):
    """Renders replies and faults in one provider's wire format."""

    api: str
    default_context_limit: int
    request_id_header: str

    def new_request_id(self) -> str:
        return random_id("req_")

    @abstractmethod
    def completion(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        """The non-streaming response body."""

    @abstractmethod
    def stream(self, reply: Reply, request: RecordedRequest) -> Iterator[Frame]:
        """Every SSE event of a streamed response, terminator included."""

    @abstractmethod
    def empty_completion(self, request: RecordedRequest) -> dict[str, Any]: ...

    @abstractmethod
    def empty_stream(self, request: RecordedRequest) -> Iterator[Frame]: ...

    @abstractmethod
    def malformed_completion(self, request: RecordedRequest) -> bytes: ...

    @abstractmethod
    def malformed_stream(self, request: RecordedRequest) -> Iterator[Frame]: ...

    @abstractmethod
    def error_body(
        self, message: str, error_type: str, code: str | None, param: str | None = None
    ) -> dict[str, Any]: ...

    @abstractmethod
    def status_defaults(self, status: int, request: RecordedRequest) -> tuple[str, str | None, str]:
        """``(type, code, message)`` a real service sends with this status."""

    @abstractmethod
    def rate_limit_headers(self, retry_after: float | None) -> dict[str, str]: ...

    @abstractmethod
    def context_overflow(self, fault: Fault, request: RecordedRequest) -> ErrorResponse: ...

    @abstractmethod
    def content_policy(self, fault: Fault, request: RecordedRequest) -> ErrorResponse: ...

    @abstractmethod
    def refuse_stream(self, request: RecordedRequest) -> ErrorResponse: ...

    @abstractmethod
    def models(self, ids: list[str]) -> dict[str, Any]: ...

    @abstractmethod
    def model(self, model_id: str) -> dict[str, Any]: ...

    def status_error(self, fault: Fault, request: RecordedRequest) -> ErrorResponse:
        status = fault.status_code or 500
        error_type, code, message = self.status_defaults(status, request)
        body = self.error_body(
            fault.message or message, fault.error_type or error_type, fault.code_str or code
        )
        headers: dict[str, str] = {}
        if status == 429:
            headers.update(self.rate_limit_headers(fault.retry_after))
        if fault.retry_after is not None:
            headers["retry-after"] = format_seconds(fault.retry_after)
        return ErrorResponse(status, body, headers)

    def bad_request(self, message: str) -> ErrorResponse:
        error_type, code, _ = self.status_defaults(400, _EMPTY_REQUEST)
        return ErrorResponse(400, self.error_body(message, error_type, code))

    def not_found(self, message: str) -> ErrorResponse:
        error_type, _, _ = self.status_defaults(404, _EMPTY_REQUEST)
        return ErrorResponse(404, self.error_body(message, error_type, None))

    def overflow_tokens(self, fault: Fault, request: RecordedRequest) -> tuple[int, int]:
        """``(limit, tokens)`` for a context-overflow error; tokens always exceed the limit."""
        limit = fault.limit or self.default_context_limit
        tokens = fault.tokens or limit + max(1, estimate_prompt_tokens(request))
        return limit, tokens


_EMPTY_REQUEST = RecordedRequest(
    method="POST",
    path="",
    headers={},
    body=None,
    raw=b"",
    api="openai",
    stream=False,
    timestamp=0.0,
)
