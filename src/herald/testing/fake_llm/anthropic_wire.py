"""The Anthropic messages wire format (JSON and SSE), as the real API sends it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from herald.testing.fake_llm.recording import RecordedRequest
from herald.testing.fake_llm.script import FakeUsage, Fault, Reply, ToolCallSpec, chunk_text
from herald.testing.fake_llm.wire_common import (
    ErrorResponse,
    Frame,
    WireFormat,
    dumps,
    estimate_usage,
    random_id,
    reply_model,
)

_STOP_FROM_OPENAI = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}

_STATUS_DEFAULTS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    402: (
        "billing_error",
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
        "Billing to upgrade or purchase credits.",
    ),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    408: ("timeout_error", "Request timed out."),
    409: ("conflict_error", "The request conflicts with another request."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: (
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50,000 input "
        "tokens per minute. Please reduce the prompt length or the maximum tokens "
        "requested, or try again later.",
    ),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "Service unavailable"),
    504: ("timeout_error", "Request timed out"),
    529: ("overloaded_error", "Overloaded"),
}

_FAKE_SIGNATURE = "ZmFrZS10aGlua2luZy1zaWduYXR1cmU="


def anthropic_stop_reason(reply: Reply) -> str:
    reason = reply.finish_reason_or_default()
    return _STOP_FROM_OPENAI.get(reason, reason)


def usage_body(usage: FakeUsage, *, streaming_start: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "input_tokens": usage.uncached_input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        # message_start carries a placeholder output count, as the real API does.
        "output_tokens": 1 if streaming_start else usage.completion_tokens,
        "service_tier": "standard",
    }
    if usage.reasoning_tokens and not streaming_start:
        body["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    return body


def _tool_input(call: ToolCallSpec) -> Any:
    """The ``input`` object of a non-streamed tool_use block.

    A JSON body cannot carry broken JSON, so unparsable string arguments are
    sent as a JSON string value; streaming sends them verbatim instead.
    """
    if not isinstance(call.arguments, str):
        return call.arguments
    try:
        return json.loads(call.arguments)
    except ValueError:
        return call.arguments


def _event(name: str, payload: dict[str, Any], *, is_delta: bool = False) -> Frame:
    return Frame(f"event: {name}\ndata: {dumps(payload)}\n\n".encode(), is_delta=is_delta)


def _message_shell(reply: Reply, request: RecordedRequest) -> dict[str, Any]:
    return {
        "id": random_id("msg_01", 22),
        "type": "message",
        "role": "assistant",
        "model": reply_model(reply, request),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
    }


class _BlockWriter:
    """Emits content_block_start/delta/stop events with running indexes."""

    def __init__(self) -> None:
        self.index = 0

    def block(self, opening: dict[str, Any], deltas: list[dict[str, Any]]) -> Iterator[Frame]:
        index = self.index
        self.index += 1
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
                is_delta=True,
            )
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})


class AnthropicWire(WireFormat):
    api = "anthropic"
    default_context_limit = 200_000
    request_id_header = "request-id"

    def new_request_id(self) -> str:
        return random_id("req_011C", 20)

    def completion(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            content.append(
                {"type": "thinking", "thinking": reply.reasoning, "signature": _FAKE_SIGNATURE}
            )
        if reply.text or not reply.tool_calls:
            content.append({"type": "text", "text": reply.text or ""})
        for call in reply.tool_calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": call.id or random_id("toolu_01", 22),
                    "name": call.name,
                    "input": _tool_input(call),
                }
            )
        message = _message_shell(reply, request)
        message["content"] = content
        message["stop_reason"] = anthropic_stop_reason(reply)
        message["usage"] = usage_body(estimate_usage(reply, request))
        return message

    def stream(self, reply: Reply, request: RecordedRequest) -> Iterator[Frame]:
        usage = estimate_usage(reply, request)
        size = reply.chunk_size
        message = _message_shell(reply, request)
        message["usage"] = usage_body(usage, streaming_start=True)
        yield _event("message_start", {"type": "message_start", "message": message})
        yield _event("ping", {"type": "ping"})
        blocks = _BlockWriter()
        if reply.reasoning is not None:
            deltas = [
                {"type": "thinking_delta", "thinking": piece}
                for piece in chunk_text(reply.reasoning, size)
            ]
            deltas.append({"type": "signature_delta", "signature": _FAKE_SIGNATURE})
            yield from blocks.block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
        if reply.text or not reply.tool_calls:
            deltas = [
                {"type": "text_delta", "text": piece}
                for piece in chunk_text(reply.text or "", size)
            ]
            yield from blocks.block({"type": "text", "text": ""}, deltas)
        for call in reply.tool_calls:
            opening = {
                "type": "tool_use",
                "id": call.id or random_id("toolu_01", 22),
                "name": call.name,
                "input": {},
            }
            pieces = ["", *chunk_text(call.arguments_json(), size)]
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
            yield from blocks.block(opening, deltas)
        yield from self._stream_end(anthropic_stop_reason(reply), usage)

    def _stream_end(self, stop_reason: str, usage: FakeUsage) -> Iterator[Frame]:
        yield _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": usage_body(usage),
            },
        )
        yield _event("message_stop", {"type": "message_stop"})

    def empty_completion(self, request: RecordedRequest) -> dict[str, Any]:
        body = self.completion(Reply(text=""), request)
        body["content"] = []
        return body

    def empty_stream(self, request: RecordedRequest) -> Iterator[Frame]:
        reply = Reply(text="")
        usage = estimate_usage(reply, request)
        message = _message_shell(reply, request)
        message["usage"] = usage_body(usage, streaming_start=True)
        yield _event("message_start", {"type": "message_start", "message": message})
        yield from self._stream_end("end_turn", usage)

    def malformed_completion(self, request: RecordedRequest) -> bytes:
        whole = dumps(self.completion(Reply.text("this body is cut short"), request))
        return whole[: len(whole) // 2].encode()

    def malformed_stream(self, request: RecordedRequest) -> Iterator[Frame]:
        reply = Reply()
        message = _message_shell(reply, request)
        message["usage"] = usage_body(estimate_usage(reply, request), streaming_start=True)
        yield _event("message_start", {"type": "message_start", "message": message})
        good = dumps(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        )
        yield Frame(f"event: content_block_start\ndata: {good[: len(good) // 2]}\n\n".encode())
        yield _event("message_stop", {"type": "message_stop"})

    def error_body(
        self, message: str, error_type: str, code: str | None, param: str | None = None
    ) -> dict[str, Any]:
        error: dict[str, Any] = {"type": error_type, "message": message}
        if code:
            error["details"] = {"error_code": code}
        return {"type": "error", "error": error, "request_id": self.new_request_id()}

    def status_defaults(self, status: int, request: RecordedRequest) -> tuple[str, str | None, str]:
        if status == 404:
            return ("not_found_error", None, f"model: {request.model or 'fake-model'}")
        if status in _STATUS_DEFAULTS:
            error_type, message = _STATUS_DEFAULTS[status]
            return (error_type, None, message)
        if status >= 500:
            return ("api_error", None, f"The server returned status {status}.")
        return ("invalid_request_error", None, f"The request failed with status {status}.")

    def rate_limit_headers(self, retry_after: float | None) -> dict[str, str]:
        return {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-input-tokens-limit": "50000",
            "anthropic-ratelimit-input-tokens-remaining": "0",
            "anthropic-ratelimit-output-tokens-limit": "10000",
            "anthropic-ratelimit-output-tokens-remaining": "10000",
        }

    def context_overflow(self, fault: Fault, request: RecordedRequest) -> ErrorResponse:
        limit, tokens = self.overflow_tokens(fault, request)
        message = f"prompt is too long: {tokens} tokens > {limit} maximum"
        return ErrorResponse(400, self.error_body(message, "invalid_request_error", None))

    def content_policy(self, fault: Fault, request: RecordedRequest) -> ErrorResponse:
        message = fault.message or "Output blocked by content filtering policy"
        return ErrorResponse(400, self.error_body(message, "invalid_request_error", None))

    def refuse_stream(self, request: RecordedRequest) -> ErrorResponse:
        message = "stream: Streaming is not supported for this model. Set `stream` to false."
        return ErrorResponse(400, self.error_body(message, "invalid_request_error", None))

    def models(self, ids: list[str]) -> dict[str, Any]:
        data = [self.model(model_id) for model_id in ids]
        return {
            "data": data,
            "has_more": False,
            "first_id": ids[0] if ids else None,
            "last_id": ids[-1] if ids else None,
        }

    def model(self, model_id: str) -> dict[str, Any]:
        return {
            "type": "model",
            "id": model_id,
            "display_name": model_id.replace("-", " ").title(),
            "created_at": "2025-01-01T00:00:00Z",
        }
