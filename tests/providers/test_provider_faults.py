"""Every injected fault, over both APIs and both call modes, becomes a
`ProviderError` that `classify_error` maps to the right reason and flags."""

from __future__ import annotations

import pytest

from herald.providers.base import CallSettings, ProviderError
from herald.providers.errors import FailoverReason as R
from herald.providers.errors import classify_error
from herald.testing.fake_llm import Fault

APIS = ("openai", "anthropic")
MESSAGES = [{"role": "user", "content": "hello"}]
SETTINGS = CallSettings(model="fake-model")

# reason -> (retryable, should_compress, should_rotate_credential, should_fallback)
FLAGS = {
    R.AUTH: (False, False, True, True),
    R.AUTH_PERMANENT: (False, False, True, True),
    R.BILLING: (False, False, True, True),
    R.RATE_LIMIT: (True, False, True, False),
    R.OVERLOADED: (True, False, False, False),
    R.SERVER_ERROR: (True, False, False, False),
    R.TIMEOUT: (True, False, False, False),
    R.CONNECTION: (True, False, False, False),
    R.CONTEXT_OVERFLOW: (False, True, False, False),
    R.PAYLOAD_TOO_LARGE: (False, True, False, False),
    R.CONTENT_POLICY: (False, False, False, False),
    R.MODEL_NOT_FOUND: (False, False, False, True),
    R.INVALID_REQUEST: (False, False, False, False),
    R.MALFORMED_RESPONSE: (True, False, False, False),
    R.EMPTY_RESPONSE: (True, False, False, False),
}

# (id, fault, expected reason — or {api: reason} where the providers' wording differs)
CASES = [
    ("401-invalid-key", Fault.status(401), R.AUTH_PERMANENT),
    ("401-plain", Fault.status(401, "Unauthorized", code_str="unauthorized"), R.AUTH),
    ("401-revoked", Fault.status(401, "This API key has been revoked."), R.AUTH_PERMANENT),
    ("402", Fault.status(402), R.BILLING),
    ("403", Fault.status(403), R.AUTH),
    ("404", Fault.status(404), R.MODEL_NOT_FOUND),
    ("413", Fault.status(413), R.PAYLOAD_TOO_LARGE),
    ("429", Fault.status(429, retry_after=2), R.RATE_LIMIT),
    ("429-quota", Fault.status(429, "You exceeded your current quota."), R.BILLING),
    ("500", Fault.status(500), R.SERVER_ERROR),
    ("503", Fault.status(503), {"openai": R.OVERLOADED, "anthropic": R.SERVER_ERROR}),
    ("529", Fault.status(529), R.OVERLOADED),
    ("400", Fault.status(400), R.INVALID_REQUEST),
    ("context-overflow", Fault.context_overflow(), R.CONTEXT_OVERFLOW),
    ("content-policy", Fault.content_policy(), R.CONTENT_POLICY),
    ("timeout", Fault.timeout(3), R.TIMEOUT),
    ("close-connection", Fault.close_connection(), R.CONNECTION),
    ("drop-mid-stream", Fault.drop_mid_stream(after_chunks=2), R.CONNECTION),
    ("malformed-json", Fault.malformed_json(), R.MALFORMED_RESPONSE),
    ("empty-choices", Fault.empty_choices(), R.EMPTY_RESPONSE),
]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("fault", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fault_classification(server, make_transport, api, stream, fault, expected):
    # Only the timeout case needs a short timeout; the others get room, so a loaded
    # machine cannot turn their fault into a timeout.
    transport = make_transport(api, timeout=0.5 if expected == R.TIMEOUT else 20)
    server.enqueue(fault)

    with pytest.raises(ProviderError) as info:
        transport.call(transport.build_request(MESSAGES, None, SETTINGS), stream=stream)

    err = info.value
    classified = classify_error(err)
    reason = expected[api] if isinstance(expected, dict) else expected
    assert classified.reason == reason, repr(err)
    flags = (
        classified.retryable,
        classified.should_compress,
        classified.should_rotate_credential,
        classified.should_fallback,
    )
    assert flags == FLAGS[reason]
    assert classified.user_message
    assert err.provider == api
    assert len(server.model_requests()) == 1
    if fault.kind == "status":
        assert err.status == fault.status_code
        assert err.body  # the provider's body text is kept for diagnosis
    if fault.retry_after is not None:
        assert classified.retry_after == pytest.approx(fault.retry_after)


@pytest.mark.parametrize("api", APIS)
def test_status_error_carries_code_and_type(server, make_transport, api):
    transport = make_transport(api)
    server.enqueue(Fault.status(429, retry_after=7, error_type="rate_limit_error", code_str="rl"))
    with pytest.raises(ProviderError) as info:
        transport.call(transport.build_request(MESSAGES, None, SETTINGS))
    err = info.value
    assert err.status == 429
    assert err.error_type == "rate_limit_error"
    assert err.code == "rl"
    assert err.retry_after == 7.0


@pytest.mark.parametrize("filler", ["comment", "whitespace"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("api", APIS)
def test_timeout_bounds_the_whole_call_not_each_read(server, make_transport, api, stream, filler):
    # The server answers 200 at once and keeps the socket busy with keep-alive filler
    # for 30 s: no single read ever waits 0.5 s, so only a whole-call bound ends it.
    transport = make_transport(api, timeout=0.5)
    server.enqueue(Fault.keepalive_stall(30, interval=0.05, filler=filler))
    with pytest.raises(ProviderError) as info:
        transport.call(transport.build_request(MESSAGES, None, SETTINGS), stream=stream)
    err = info.value
    assert classify_error(err).reason == R.TIMEOUT
    assert "model.timeout" in err.message and "0.5" in err.message
