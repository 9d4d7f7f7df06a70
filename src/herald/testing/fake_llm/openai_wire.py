"""The OpenAI chat-completions wire format (JSON and SSE), as the real API sends it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from herald.testing.fake_llm.recording import RecordedRequest
from herald.testing.fake_llm.script import FakeUsage, Fault, Reply, chunk_text
from herald.testing.fake_llm.wire_common import (
    ErrorResponse,
    Frame,
    WireFormat,
    dumps,
    estimate_usage,
    format_seconds,
    random_id,
    reply_model,
)

_FINISH_FROM_ANTHROPIC = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

_STATUS_DEFAULTS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request: the request could not be processed."),
    402: (
        "insufficient_quota",
        "insufficient_quota",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    403: (
        "permission_error",
        "permission_denied",
        "You are not allowed to access this resource. Check your project's permissions.",
    ),
    408: ("timeout", None, "Request timed out."),
    409: ("invalid_request_error", "conflict", "The request conflicts with another request."),
    413: (
        "invalid_request_error",
        "request_too_large",
        "Request too large: the request body exceeds the maximum allowed size.",
    ),
    422: ("invalid_request_error", None, "Unprocessable request."),
    500: (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
    504: ("server_error", None, "Gateway timeout: the request took too long to complete."),
    529: ("server_error", None, "The server is overloaded, please try again later."),
}


def openai_finish_reason(reply: Reply) -> str:
    reason = reply.finish_reason_or_default()
    return _FINISH_FROM_ANTHROPIC.get(reason, reason)


def usage_body(usage: FakeUsage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        "prompt_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "audio_tokens": 0,
        },
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _mask_key(request: RecordedRequest) -> str:
    key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if len(key) <= 6:
        return key[:2] + "*" * max(0, len(key) - 2)
    return key[:3] + "*" * (len(key) - 7) + key[-4:]


def _sse(payload: dict[str, Any]) -> bytes:
    return f"data: {dumps(payload)}\n\n".encode()


_DONE = Frame(b"data: [DONE]\n\n")


class _Chunker:
    """Builds ``chat.completion.chunk`` payloads sharing one id/created/model."""

    def __init__(self, reply: Reply, request: RecordedRequest) -> None:
        self.id = random_id("chatcmpl-", 29)
        self.created = int(time.time())
        self.model = reply_model(reply, request)
        options = (request.body or {}).get("stream_options") or {}
        self.include_usage = bool(isinstance(options, dict) and options.get("include_usage"))

    def payload(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_fake",
            "choices": choices,
        }
        if self.include_usage:
            payload["usage"] = None
        return payload

    def delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return self.payload([choice])

    def usage(self, usage: FakeUsage) -> dict[str, Any]:
        payload = self.payload([])
        payload["usage"] = usage_body(usage)
        return payload


class OpenAIWire(WireFormat):
    api = "openai"
    default_context_limit = 128_000
    request_id_header = "x-request-id"

    def completion(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text if reply.text is not None or reply.tool_calls else "",
            "refusal": None,
        }
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id or random_id("call_"),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json()},
                }
                for call in reply.tool_calls
            ]
        return {
            "id": random_id("chatcmpl-", 29),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply_model(reply, request),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": openai_finish_reason(reply),
                }
            ],
            "usage": usage_body(estimate_usage(reply, request)),
        }

    def stream(self, reply: Reply, request: RecordedRequest) -> Iterator[Frame]:
        chunker = _Chunker(reply, request)
        size = reply.chunk_size
        yield Frame(_sse(chunker.delta({"role": "assistant", "content": "", "refusal": None})))
        for piece in chunk_text(reply.reasoning or "", size):
            yield Frame(_sse(chunker.delta({"reasoning_content": piece})), is_delta=True)
        for piece in chunk_text(reply.text or "", size):
            yield Frame(_sse(chunker.delta({"content": piece})), is_delta=True)
        for index, call in enumerate(reply.tool_calls):
            opening = {
                "index": index,
                "id": call.id or random_id("call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield Frame(_sse(chunker.delta({"tool_calls": [opening]})), is_delta=True)
            for piece in chunk_text(call.arguments_json(), size):
                fragment = {"index": index, "function": {"arguments": piece}}
                yield Frame(_sse(chunker.delta({"tool_calls": [fragment]})), is_delta=True)
        yield Frame(_sse(chunker.delta({}, openai_finish_reason(reply))))
        if chunker.include_usage:
            yield Frame(_sse(chunker.usage(estimate_usage(reply, request))))
        yield _DONE

    def empty_completion(self, request: RecordedRequest) -> dict[str, Any]:
        body = self.completion(Reply(text=""), request)
        body["choices"] = []
        return body

    def empty_stream(self, request: RecordedRequest) -> Iterator[Frame]:
        reply = Reply(text="")
        chunker = _Chunker(reply, request)
        yield Frame(_sse(chunker.payload([])))
        if chunker.include_usage:
            yield Frame(_sse(chunker.usage(estimate_usage(reply, request))))
        yield _DONE

    def malformed_completion(self, request: RecordedRequest) -> bytes:
        whole = dumps(self.completion(Reply.text("this body is cut short"), request))
        return whole[: len(whole) // 2].encode()

    def malformed_stream(self, request: RecordedRequest) -> Iterator[Frame]:
        chunker = _Chunker(Reply(), request)
        yield Frame(_sse(chunker.delta({"role": "assistant", "content": ""})))
        good = dumps(chunker.delta({"content": "never finished"}))
        yield Frame(f"data: {good[: len(good) // 2]}\n\n".encode(), is_delta=True)
        yield _DONE

    def error_body(
        self, message: str, error_type: str, code: str | None, param: str | None = None
    ) -> dict[str, Any]:
        return {"error": {"message": message, "type": error_type, "param": param, "code": code}}

    def status_defaults(self, status: int, request: RecordedRequest) -> tuple[str, str | None, str]:
        model = request.model or "fake-model"
        if status == 401:
            return (
                "invalid_request_error",
                "invalid_api_key",
                f"Incorrect API key provided: {_mask_key(request)}. You can find your API key "
                "at https://platform.openai.com/account/api-keys.",
            )
        if status == 404:
            return (
                "invalid_request_error",
                "model_not_found",
                f"The model `{model}` does not exist or you do not have access to it.",
            )
        if status == 429:
            return (
                "tokens",
                "rate_limit_exceeded",
                f"Rate limit reached for {model} in organization org-fake on tokens per min "
                "(TPM): Limit 30000, Used 30000, Requested 1200. Please try again later.",
            )
        if status in _STATUS_DEFAULTS:
            return _STATUS_DEFAULTS[status]
        if status >= 500:
            return ("server_error", None, f"The server returned status {status}.")
        return ("invalid_request_error", None, f"The request failed with status {status}.")

    def rate_limit_headers(self, retry_after: float | None) -> dict[str, str]:
        reset = format_seconds(retry_after) + "s" if retry_after is not None else "1s"
        return {
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": reset,
            "x-ratelimit-limit-tokens": "30000",
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-tokens": reset,
        }

    def context_overflow(self, fault: Fault, request: RecordedRequest) -> ErrorResponse:
        limit, tokens = self.overflow_tokens(fault, request)
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages."
        )
        return ErrorResponse(
            400,
            self.error_body(
                message, "invalid_request_error", "context_length_exceeded", "messages"
            ),
        )

    def content_policy(self, fault: Fault, request: RecordedRequest) -> ErrorResponse:
        message = fault.message or (
            "The response was filtered due to the prompt triggering the content management "
            "policy (content_policy_violation). Please modify your prompt and retry."
        )
        return ErrorResponse(
            400, self.error_body(message, "invalid_request_error", "content_filter", "prompt")
        )

    def refuse_stream(self, request: RecordedRequest) -> ErrorResponse:
        message = (
            "Unsupported value: 'stream' does not support true with this model. "
            "Supported values are: false."
        )
        return ErrorResponse(
            400, self.error_body(message, "invalid_request_error", "unsupported_value", "stream")
        )

    def models(self, ids: list[str]) -> dict[str, Any]:
        return {"object": "list", "data": [self.model(model_id) for model_id in ids]}

    def model(self, model_id: str) -> dict[str, Any]:
        return {"id": model_id, "object": "model", "created": 1700000000, "owned_by": "herald"}
