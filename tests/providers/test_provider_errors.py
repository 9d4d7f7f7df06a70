"""classify_error on raw exceptions, SDK exceptions and provider wordings."""

from __future__ import annotations

import email.utils
import json
import time

import pytest

from herald.providers.base import ProviderError
from herald.providers.error_mapping import parse_retry_after, to_provider_error
from herald.providers.errors import FailoverReason as R
from herald.providers.errors import classify_error


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (TimeoutError("timed out"), R.TIMEOUT),
        (TimeoutError("timed out"), R.TIMEOUT),
        (ConnectionResetError("reset by peer"), R.CONNECTION),
        (ConnectionRefusedError("refused"), R.CONNECTION),
        (OSError("network is unreachable"), R.CONNECTION),
        (json.JSONDecodeError("Expecting value", "x", 0), R.MALFORMED_RESPONSE),
        (ValueError("a bug, not a provider failure"), R.UNKNOWN),
        (RuntimeError("boom"), R.UNKNOWN),
    ],
)
def test_raw_exceptions(exc, reason):
    classified = classify_error(exc)
    assert classified.reason == reason
    if reason is R.UNKNOWN:
        assert not classified.retryable


def _openai_status(status: int, body: dict, headers: dict | None = None):
    import httpx2
    import openai

    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx2.Response(status, json=body, headers=headers or {}, request=request)
    cls = {400: openai.BadRequestError, 429: openai.RateLimitError}[status]
    return cls(f"Error code: {status}", response=response, body=body["error"])


def test_sdk_exceptions_by_attribute():
    import httpx2
    import openai

    request = httpx2.Request("POST", "http://x/v1/chat/completions")
    assert classify_error(openai.APITimeoutError(request=request)).reason == R.TIMEOUT
    assert classify_error(openai.APIConnectionError(request=request)).reason == R.CONNECTION

    err = _openai_status(
        429,
        {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}},
        {"retry-after-ms": "1500"},
    )
    classified = classify_error(err)
    assert classified.reason == R.RATE_LIMIT
    assert classified.retry_after == pytest.approx(1.5)

    err = _openai_status(400, {"error": {"message": "too long", "code": "context_length_exceeded"}})
    assert classify_error(err).reason == R.CONTEXT_OVERFLOW


def test_anthropic_sdk_exception_by_attribute():
    import anthropic
    import httpx2

    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    response = httpx2.Response(529, json=body, request=request)
    err = anthropic.OverloadedError("Overloaded", response=response, body=body)
    provider_error = to_provider_error(err, "anthropic")
    assert provider_error.status == 529
    assert provider_error.error_type == "overloaded_error"
    assert classify_error(err).reason == R.OVERLOADED


@pytest.mark.parametrize(
    "message",
    [
        # OpenAI / vLLM
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
        # Anthropic
        "prompt is too long: 210000 tokens > 200000 maximum",
        # codes and other OpenAI-compatible servers
        "context_length_exceeded",
        "The input exceeds the context window of this model",
        "Input is too long for requested model.",
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "Too many tokens: the prompt has 40000 tokens",
        "Please reduce the length of the messages or completion.",
    ],
)
def test_context_overflow_wordings(message):
    err = ProviderError(f"HTTP 400: {message}", status=400, body=json.dumps({"error": message}))
    classified = classify_error(err)
    assert classified.reason == R.CONTEXT_OVERFLOW
    assert classified.should_compress


def test_too_many_tokens_on_429_is_a_rate_limit_not_an_overflow():
    err = ProviderError("HTTP 429: too many tokens per minute", status=429)
    assert classify_error(err).reason == R.RATE_LIMIT


def test_context_overflow_in_a_stream_error_event():
    err = ProviderError("provider error: prompt is too long", error_type="invalid_request_error")
    assert classify_error(err).reason == R.CONTEXT_OVERFLOW


@pytest.mark.parametrize(
    ("status", "message", "reason"),
    [
        (402, "Insufficient credits", R.BILLING),
        (400, "Your credit balance is too low to access the Anthropic API.", R.BILLING),
        (403, "Your account has been deactivated", R.AUTH_PERMANENT),
        (404, "The model `nope` does not exist", R.MODEL_NOT_FOUND),
        (400, "model 'llama9' not found, try pulling it first", R.MODEL_NOT_FOUND),
        (408, "Request timeout", R.TIMEOUT),
        (502, "Bad gateway", R.SERVER_ERROR),
        (422, "Unprocessable", R.INVALID_REQUEST),
        (400, "Your request was flagged by our safety system", R.CONTENT_POLICY),
    ],
)
def test_status_and_wording_table(status, message, reason):
    err = ProviderError(f"HTTP {status}: {message}", status=status)
    assert classify_error(err).reason == reason


def test_stream_error_event_types_without_status():
    overloaded = ProviderError("provider error: Overloaded", error_type="overloaded_error")
    assert classify_error(overloaded).reason == R.OVERLOADED
    rate = ProviderError("provider error: slow down", error_type="rate_limit_error")
    assert classify_error(rate).reason == R.RATE_LIMIT
    server = ProviderError("provider error: Internal error", error_type="api_error")
    assert classify_error(server).reason == R.SERVER_ERROR


class _Headers(dict):
    def get(self, key, default=None):
        return super().get(key.lower(), default)


def test_retry_after_parsing():
    assert parse_retry_after(_Headers({"retry-after": "3"})) == 3.0
    assert parse_retry_after(_Headers({"retry-after": "0.5"})) == 0.5
    assert parse_retry_after(_Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after(_Headers({"retry-after": future})) <= 31
    assert parse_retry_after(_Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(_Headers({})) is None
    assert parse_retry_after(None) is None
