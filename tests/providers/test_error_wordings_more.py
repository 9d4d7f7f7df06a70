"""Issue 28, provider errors: more wordings and codes for context overflow
(Chinese-language servers, Zhipu, llama.cpp), request errors hidden in a 5xx,
rate limits delivered as 402 or throttling text, and Azure's content filter.
Each case is the `ProviderError` a transport builds from the server's answer;
`classify_error` must pick the reason whose recovery helps."""

from __future__ import annotations

import json

import pytest

from herald.providers.base import ProviderError
from herald.providers.errors import FailoverReason as R
from herald.providers.errors import Recovery, classify_error


def _err(status: int | None, message: str, *, code: str | None = None,
         etype: str | None = None, body: dict | None = None) -> ProviderError:  # fmt: skip
    text = json.dumps(body, ensure_ascii=False) if body is not None else None
    return ProviderError(f"HTTP {status}: {message}", status=status, body=text, code=code,
                         error_type=etype)  # fmt: skip


OVERFLOW = [
    _err(400, "输入长度超过模型上下文长度限制，请缩短输入"),
    _err(400, "请求的token数超过了模型最大上下文长度"),
    _err(400, "Prompt 超长", code="1261"),
    _err(
        400,
        "prompt too long",
        code="1261",
        body={"error": {"code": "1261", "message": "Prompt 超长"}},
    ),
    _err(500, "上下文窗口已满，超出最大长度"),
    _err(400, "Range of input length should be [1, 30720]"),
    _err(500, "not enough space in the context's memory to process the request"),
    _err(400, "failed to find a memory slot: not enough space in the context"),
    _err(
        400,
        "The input token count (1048600) exceeds the maximum number of tokens allowed (1048576).",
    ),
    _err(400, "Your request exceeded model token limit: 131072"),
    _err(400, "输入token数超出限制"),
    _err(400, "当前输入超出模型上下文窗口"),
    _err(400, "模型最大上下文长度为 8192，您的请求超出了"),
    _err(500, "llama_decode: failed to decode, ret = 1: not enough space in the context"),
]


@pytest.mark.parametrize("err", OVERFLOW, ids=lambda e: e.message[:40])
def test_context_overflow_wordings_compress(err: ProviderError) -> None:
    got = classify_error(err)
    assert got.reason == R.CONTEXT_OVERFLOW, err
    assert got.recovery == Recovery.COMPRESS


REQUEST_IN_5XX = [
    _err(500, "Invalid 'messages[3].content': expected a string", etype="invalid_request_error"),
    _err(
        503,
        "bad tool schema",
        body={"error": {"type": "invalid_request_error", "message": "bad tool schema"}},
    ),
    _err(502, "Unsupported parameter: 'temperature'", etype="invalid_request_error"),
    _err(500, "messages: roles must alternate", code="invalid_request_error"),
    _err(
        500,
        "Invalid request",
        body={"error": {"message": "tools[0].name too long", "type": "invalid_request_error"}},
    ),
]


@pytest.mark.parametrize("err", REQUEST_IN_5XX, ids=lambda e: e.message[:40])
def test_a_5xx_saying_invalid_request_is_not_retried(err: ProviderError) -> None:
    got = classify_error(err)
    assert got.reason == R.INVALID_REQUEST, err
    assert got.recovery == Recovery.STOP and not got.retryable


def test_a_5xx_without_request_wording_is_still_a_server_error() -> None:
    got = classify_error(_err(500, "internal error", etype="api_error"))
    assert got.reason == R.SERVER_ERROR and got.retryable


RATE_LIMITS = [
    _err(402, "Rate limit reached for requests. Please try again in 20 minutes."),
    _err(402, "You have hit your usage cap for this window; try again in 3 min"),
    _err(402, "Too many concurrent requests, retry in 45 seconds"),
    _err(
        400,
        "Request rate increased too quickly. To ensure system stability, please adjust your client logic to scale requests more smoothly over time.",
    ),
    _err(503, "Requests rate increased too quickly, please slow down"),
    _err(403, "Throttling: request was throttled, please retry later", code="Throttling"),
    _err(None, "request rate increased too quickly"),
    _err(402, "Quota window exhausted. Please try again in 1 hour."),
    _err(500, "Request rate increased too quickly"),
]


@pytest.mark.parametrize("err", RATE_LIMITS, ids=lambda e: e.message[:40])
def test_temporary_limits_retry_instead_of_benching_the_key(err: ProviderError) -> None:
    got = classify_error(err)
    assert got.reason == R.RATE_LIMIT, err
    assert got.recovery == Recovery.RETRY and got.retryable


def test_a_402_naming_a_wait_carries_it_as_retry_after() -> None:
    assert classify_error(RATE_LIMITS[0]).retry_after == 20 * 60
    assert classify_error(RATE_LIMITS[2]).retry_after == 45


def test_a_402_without_a_wait_is_still_billing() -> None:
    got = classify_error(_err(402, "Insufficient credits. Add more at https://example/billing"))
    assert got.reason == R.BILLING
    got = classify_error(_err(402, "Payment required: try again after topping up your balance"))
    assert got.reason == R.BILLING


CONTENT = [
    _err(400, "The response was filtered", code="ResponsibleAIPolicyViolation"),
    _err(
        400,
        "filtered",
        body={
            "error": {
                "code": "content_filter",
                "innererror": {"code": "ResponsibleAIPolicyViolation"},
            }
        },
    ),
    _err(500, "ResponsibleAIPolicyViolation: jailbreak detected"),
    _err(400, "Output blocked by content filtering policy", code="ResponsibleAIPolicyViolation"),
    _err(None, "stream ended: ResponsibleAIPolicyViolation"),
]


@pytest.mark.parametrize("err", CONTENT, ids=lambda e: e.message[:40])
def test_azure_policy_violation_is_a_content_block(err: ProviderError) -> None:
    got = classify_error(err)
    assert got.reason == R.CONTENT_POLICY, err
    assert got.recovery == Recovery.STOP
