"""Error wordings of the servers people run (vLLM, llama.cpp, Ollama, gateways,
Anthropic), sent over real HTTP by the fake server: each classifies to the reason
whose `Recovery` helps (compress, wait, rotate, fall back, stop)."""

from __future__ import annotations

import pytest

from herald.providers.base import CallSettings, ProviderError
from herald.providers.errors import FailoverReason as R
from herald.providers.errors import Recovery, classify_error
from herald.testing.fake_llm import Fault

MESSAGES = [{"role": "user", "content": "hello"}]
SETTINGS = CallSettings(model="fake-model")

# (id, status, message, reason, recovery)
WORDINGS = [
    (
        "vllm-max-model-len",
        400,
        "prompt length 9000 exceeds max_model_len 8192. Please reduce the prompt.",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "vllm-maximum-model-length",
        400,
        "The decoder prompt (length 9000) exceeds maximum model length of 8192.",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "vllm-longer-than",
        400,
        "The decoder prompt (length 9000) is longer than the maximum model length of 8192.",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "llama-cpp-context-size",
        400,
        "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "llama-cpp-slot",
        500,
        "input is larger than the max context size. skipping",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "llama-cpp-ctx-shift",
        400,
        "the request exceeds n_ctx_slot and context shift is disabled",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "ollama",
        400,
        "prompt too long; exceeded max context length by 812 tokens",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "ollama-input-length",
        500,
        "the input length exceeds the context length",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "overflow-on-413",
        413,
        "This model's maximum context length is 8192 tokens",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "overflow-on-502",
        502,
        "upstream: prompt is too long: 210000 tokens > 200000 maximum",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "overflow-on-503",
        503,
        "prompt length 9000 exceeds max_model_len 8192",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "overflow-on-529",
        529,
        "input length and max_tokens exceed context limit: context_length_exceeded",
        R.CONTEXT_OVERFLOW,
        Recovery.COMPRESS,
    ),
    (
        "plain-503-is-not-overflow",
        503,
        "Service temporarily unavailable",
        None,  # per API (overloaded / server error), but retried either way
        Recovery.RETRY,
    ),
    (
        "rate-limit-in-400",
        400,
        "Rate limit reached for requests. Please try again in 20s.",
        R.RATE_LIMIT,
        Recovery.RETRY,
    ),
    (
        "too-many-requests-in-400",
        400,
        "Too many requests, slow down",
        R.RATE_LIMIT,
        Recovery.RETRY,
    ),
    (
        "anthropic-out-of-extra-usage",
        400,
        "You're out of extra usage. Add more at claude.ai/settings/usage and keep going.",
        R.BILLING,
        Recovery.ROTATE,
    ),
    (
        "out-of-extra-usage-on-429",
        429,
        "You are out of extra usage for this organization.",
        R.BILLING,
        Recovery.ROTATE,
    ),
]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("status", "message", "reason", "recovery"),
    [w[1:] for w in WORDINGS],
    ids=[w[0] for w in WORDINGS],
)
def test_server_wording_classifies_to_the_recovery_that_helps(
    server, make_transport, api, status, message, reason, recovery
):
    transport = make_transport(api, timeout=5.0)
    server.enqueue(Fault.status(status, message))
    with pytest.raises(ProviderError) as info:
        transport.call(transport.build_request(MESSAGES, None, SETTINGS), stream=False)
    classified = classify_error(info.value)
    if reason is not None:
        assert classified.reason == reason, repr(info.value)
    assert classified.recovery == recovery, repr(info.value)
    assert message.split(".")[0] in classified.detail  # the provider's words are kept


def test_every_reason_has_one_recovery():
    from herald.providers.errors import POLICY, RECOVERY

    assert set(RECOVERY) == set(POLICY) == set(R)


def test_a_missing_optional_module_says_what_to_install():
    error = ModuleNotFoundError("No module named 'xllamacpp'", name="xllamacpp")
    classified = classify_error(error)
    assert classified.reason == R.MISSING_DEPENDENCY
    assert "pip install 'herald[local]'" in classified.detail
    assert "not installed" in classified.user_message
