"""Every Fault makes the real SDKs fail the way the real services make them fail."""

from __future__ import annotations

import json
import re
from typing import Protocol

import anthropic
import httpx2
import openai
import pytest

from herald.testing.fake_llm import FakeLLMServer, Fault, Reply

USER = [{"role": "user", "content": "hello there"}]
APIS = ("openai", "anthropic")


class Caller(Protocol):
    def __call__(
        self,
        api: str,
        *,
        stream: bool = False,
        timeout: float = 5.0,
        max_retries: int = 0,
        received: list[str] | None = None,
    ) -> str: ...


@pytest.fixture
def call(oai: openai.OpenAI, claude: anthropic.Anthropic) -> Caller:
    """One model call through the real SDK; returns the text, collecting streamed pieces."""

    def run(
        api: str,
        *,
        stream: bool = False,
        timeout: float = 5.0,
        max_retries: int = 0,
        received: list[str] | None = None,
    ) -> str:
        pieces = received if received is not None else []
        if api == "openai":
            client = oai.with_options(timeout=timeout, max_retries=max_retries)
            if not stream:
                result = client.chat.completions.create(model="gpt-test", messages=USER)  # type: ignore[arg-type]
                return "".join(choice.message.content or "" for choice in result.choices)
            chunks = client.chat.completions.create(model="gpt-test", messages=USER, stream=True)  # type: ignore[arg-type]
            for chunk in chunks:
                pieces.extend(c.delta.content for c in chunk.choices if c.delta.content)
            return "".join(pieces)
        messages = claude.with_options(timeout=timeout, max_retries=max_retries).messages
        if not stream:
            message = messages.create(model="claude-test", max_tokens=64, messages=USER)  # type: ignore[arg-type]
            return "".join(getattr(block, "text", "") for block in message.content)
        events = messages.create(model="claude-test", max_tokens=64, messages=USER, stream=True)  # type: ignore[arg-type]
        for event in events:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                pieces.append(event.delta.text)
        return "".join(pieces)

    return run


def sdk(api: str):  # -> the SDK module, for its exception classes
    return openai if api == "openai" else anthropic


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [False, True])
def test_rate_limit_has_retry_after_and_provider_body(
    server: FakeLLMServer, call: Caller, api: str, stream: bool
) -> None:
    server.enqueue(Fault.status(429, retry_after=7))

    with pytest.raises(sdk(api).RateLimitError) as caught:
        call(api, stream=stream)

    error = caught.value
    assert error.status_code == 429
    assert error.response.headers["retry-after"] == "7"
    body = error.response.json()
    if api == "openai":
        assert error.code == "rate_limit_exceeded"  # type: ignore[union-attr]
        assert set(body["error"]) == {"message", "type", "param", "code"}
        assert error.response.headers["x-ratelimit-remaining-requests"] == "0"
    else:
        assert body["type"] == "error"
        assert body["error"]["type"] == "rate_limit_error"
        assert error.type == "rate_limit_error"  # type: ignore[union-attr]
        assert error.request_id == error.response.headers["request-id"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("status", "openai_error", "anthropic_error", "openai_type", "anthropic_type"),
    [
        (401, openai.AuthenticationError, anthropic.AuthenticationError, "invalid_request_error", "authentication_error"),
        (402, openai.APIStatusError, anthropic.PaymentRequiredError, "insufficient_quota", "billing_error"),
        (403, openai.PermissionDeniedError, anthropic.PermissionDeniedError, "permission_error", "permission_error"),
        (404, openai.NotFoundError, anthropic.NotFoundError, "invalid_request_error", "not_found_error"),
        (413, openai.APIStatusError, anthropic.ContentTooLargeError, "invalid_request_error", "request_too_large"),
        (500, openai.InternalServerError, anthropic.InternalServerError, "server_error", "api_error"),
        (503, openai.InternalServerError, anthropic.ServiceUnavailableError, "server_error", "api_error"),
        (529, openai.InternalServerError, anthropic.OverloadedError, "server_error", "overloaded_error"),
    ],
)  # fmt: skip
def test_status_faults_map_to_sdk_errors(
    server: FakeLLMServer,
    call: Caller,
    status: int,
    openai_error: type[Exception],
    anthropic_error: type[Exception],
    openai_type: str,
    anthropic_type: str,
) -> None:
    server.enqueue(Fault.status(status), Fault.status(status))

    with pytest.raises(openai_error) as from_openai:
        call("openai")
    with pytest.raises(anthropic_error) as from_anthropic:
        call("anthropic")

    assert from_openai.value.status_code == status  # type: ignore[attr-defined]
    assert from_openai.value.type == openai_type  # type: ignore[attr-defined]
    assert from_anthropic.value.status_code == status  # type: ignore[attr-defined]
    assert from_anthropic.value.type == anthropic_type  # type: ignore[attr-defined]
    assert "retry-after" not in from_openai.value.response.headers  # type: ignore[attr-defined]


def test_status_fault_overrides_message_type_and_code(server: FakeLLMServer, call: Caller) -> None:
    server.enqueue(
        Fault.status(400, "Custom failure", error_type="invalid_request_error", code_str="odd_code")
    )

    with pytest.raises(openai.BadRequestError) as caught:
        call("openai")

    assert caught.value.code == "odd_code"
    assert caught.value.message.endswith("Custom failure")


@pytest.mark.parametrize("api", APIS)
def test_sdk_retry_honours_retry_after_and_gets_next_item(
    server: FakeLLMServer, call: Caller, api: str
) -> None:
    server.enqueue(Fault.status(429, retry_after=0.01), Reply.text("after the retry"))

    assert call(api, max_retries=1) == "after the retry"

    first, second = server.model_requests()
    assert first.headers["x-stainless-retry-count"] == "0"
    assert second.headers["x-stainless-retry-count"] == "1"


@pytest.mark.parametrize("api", APIS)
def test_context_overflow(server: FakeLLMServer, call: Caller, api: str) -> None:
    server.enqueue(Fault.context_overflow(), Fault.context_overflow(limit=8192, tokens=9000))

    with pytest.raises(sdk(api).BadRequestError) as default:
        call(api)
    with pytest.raises(sdk(api).BadRequestError) as custom:
        call(api, stream=True)

    if api == "openai":
        pattern = r"maximum context length is (\d+) tokens\. However, your messages resulted in (\d+) tokens"
        assert default.value.code == "context_length_exceeded"  # type: ignore[union-attr]
        found = re.search(pattern, default.value.message)
        assert found is not None
        limit, tokens = int(found[1]), int(found[2])
    else:
        found = re.search(
            r"prompt is too long: (\d+) tokens > (\d+) maximum", default.value.message
        )
        assert found is not None
        tokens, limit = int(found[1]), int(found[2])
        assert default.value.type == "invalid_request_error"  # type: ignore[union-attr]
    assert tokens > limit
    assert "8192" in custom.value.message and "9000" in custom.value.message


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [False, True])
def test_timeout_fires_client_timeout_and_server_keeps_serving(
    server: FakeLLMServer, call: Caller, api: str, stream: bool
) -> None:
    server.enqueue(Fault.timeout(10), Reply.text("still alive"))

    with pytest.raises(sdk(api).APITimeoutError):
        call(api, stream=stream, timeout=0.3)

    assert call(api, stream=stream) == "still alive"


@pytest.mark.parametrize("api", APIS)
def test_reply_delay_holds_back_the_headers(server: FakeLLMServer, call: Caller, api: str) -> None:
    server.enqueue(Reply.text("too late", delay=10))

    with pytest.raises(sdk(api).APITimeoutError):
        call(api, timeout=0.3)


def test_chunk_delay_holds_back_chunks_after_the_first(
    server: FakeLLMServer, oai: openai.OpenAI, claude: anthropic.Anthropic
) -> None:
    server.enqueue(
        Reply.text("abcdefgh", chunk_size=4, chunk_delay=10),
        Reply.text("abcdefgh", chunk_size=4, chunk_delay=10),
    )

    # Headers and the first event arrive at once; the next one is 10 s away.
    chunks = oai.with_options(timeout=0.3).chat.completions.create(
        model="m",
        messages=USER,  # type: ignore[arg-type]
        stream=True,
    )
    assert next(iter(chunks)).choices[0].delta.role == "assistant"
    with pytest.raises(openai.APITimeoutError):
        next(iter(chunks))
    events = claude.with_options(timeout=0.3).messages.create(
        model="c",
        max_tokens=64,
        messages=USER,  # type: ignore[arg-type]
        stream=True,
    )
    assert next(iter(events)).type == "message_start"
    # Anthropic's raw stream iterator lets httpx's timeout through unwrapped.
    with pytest.raises((anthropic.APITimeoutError, httpx2.TimeoutException)):
        next(iter(events))


@pytest.mark.parametrize("api", APIS)
def test_drop_mid_stream_cuts_after_some_chunks(
    server: FakeLLMServer, call: Caller, api: str
) -> None:
    server.enqueue(
        Fault.drop_mid_stream(after_chunks=2, reply=Reply.text("abcdefghijklmnop", chunk_size=4))
    )
    received: list[str] = []

    # OpenAI wraps the transport error; Anthropic's stream iterator lets httpx's through.
    with pytest.raises((sdk(api).APIConnectionError, httpx2.TransportError)):
        call(api, stream=True, received=received)

    assert received == ["abcd", "efgh"]


@pytest.mark.parametrize("api", APIS)
def test_drop_mid_stream_on_a_plain_request_truncates_the_body(
    server: FakeLLMServer, call: Caller, api: str
) -> None:
    server.enqueue(Fault.drop_mid_stream(), Reply.text("next"))

    with pytest.raises(sdk(api).APIConnectionError):
        call(api)

    assert call(api) == "next"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [False, True])
def test_malformed_json(server: FakeLLMServer, call: Caller, api: str, stream: bool) -> None:
    server.enqueue(Fault.malformed_json())

    with pytest.raises(json.JSONDecodeError):
        call(api, stream=stream)


@pytest.mark.parametrize("stream", [False, True])
def test_empty_choices_openai(server: FakeLLMServer, oai: openai.OpenAI, stream: bool) -> None:
    server.enqueue(Fault.empty_choices())

    if stream:
        chunks = list(oai.chat.completions.create(model="m", messages=USER, stream=True))  # type: ignore[arg-type]
        assert chunks and all(chunk.choices == [] for chunk in chunks)
    else:
        completion = oai.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        assert completion.choices == []
        assert completion.usage is not None


def test_empty_content_anthropic(server: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    server.enqueue(Fault.empty_choices(), Fault.empty_choices())

    message = claude.messages.create(model="c", max_tokens=64, messages=USER)  # type: ignore[arg-type]
    with claude.messages.stream(model="c", max_tokens=64, messages=USER) as stream:  # type: ignore[arg-type]
        kinds = [event.type for event in stream]
        streamed = stream.get_final_message()

    assert message.content == []
    assert streamed.content == []
    assert "content_block_start" not in kinds


@pytest.mark.parametrize("api", APIS)
def test_refuse_stream_then_non_streaming_fallback_gets_the_script(
    server: FakeLLMServer, call: Caller, api: str
) -> None:
    server.enqueue(Fault.refuse_stream(), Reply.text("fallback answer"))

    with pytest.raises(sdk(api).BadRequestError) as caught:
        call(api, stream=True)
    assert "stream" in caught.value.message.lower()
    if api == "openai":
        assert caught.value.param == "stream"  # type: ignore[union-attr]

    assert call(api) == "fallback answer"
    assert server.pending == 0


def test_refuse_stream_is_passed_over_by_plain_requests(
    server: FakeLLMServer, call: Caller
) -> None:
    server.enqueue(Fault.refuse_stream(), Reply.text("first"), Reply.text("second"))

    assert call("openai") == "first"
    assert server.pending == 2  # the refusal still waits for a streaming request
    with pytest.raises(openai.BadRequestError):
        call("openai", stream=True)
    assert call("openai", stream=True) == "second"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [False, True])
def test_close_connection(server: FakeLLMServer, call: Caller, api: str, stream: bool) -> None:
    server.enqueue(Fault.close_connection(), Reply.text("reconnected"))

    with pytest.raises(sdk(api).APIConnectionError) as caught:
        call(api, stream=stream)

    assert not isinstance(caught.value, sdk(api).APITimeoutError)
    assert call(api, stream=stream) == "reconnected"


@pytest.mark.parametrize("api", APIS)
def test_content_policy(server: FakeLLMServer, call: Caller, api: str) -> None:
    server.enqueue(Fault.content_policy())

    with pytest.raises(sdk(api).BadRequestError) as caught:
        call(api)

    message = caught.value.message
    if api == "openai":
        assert caught.value.code == "content_filter"  # type: ignore[union-attr]
        assert "content_policy_violation" in message
    else:
        assert "content filtering policy" in message
        assert caught.value.type == "invalid_request_error"  # type: ignore[union-attr]
