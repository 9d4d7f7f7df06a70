"""Both SDK transports against the fake server over real HTTP: text, tool calls,
reasoning, usage, streaming deltas, one request per call, stream refusal."""

from __future__ import annotations

import json

import pytest

from herald.providers.base import CallSettings, ProviderError, StreamDelta
from herald.testing.fake_llm import FakeUsage, Fault, Reply, ToolCallSpec

APIS = ("openai", "anthropic")

MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Say hello."},
]
SETTINGS = CallSettings(model="fake-model", max_tokens=256)
TODO_TOOL = {
    "type": "function",
    "function": {
        "name": "todo",
        "description": "Track todos.",
        "parameters": {"type": "object", "properties": {"todos": {"type": "array"}}},
    },
}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
def test_text_reply_with_reasoning_and_usage(server, make_transport, api, stream):
    transport = make_transport(api)
    usage = FakeUsage(
        prompt_tokens=1000,
        completion_tokens=50,
        cache_read_tokens=600,
        cache_write_tokens=300,
        reasoning_tokens=20,
    )
    server.enqueue(Reply.text("Hello there, friend!", reasoning="The user greets.", usage=usage))

    response = transport.call(transport.build_request(MESSAGES, None, SETTINGS), stream=stream)

    assert response.text == "Hello there, friend!"
    assert response.reasoning == "The user greets."
    assert response.finish_reason == "stop"
    assert response.tool_calls == []
    assert response.usage is not None
    assert response.usage.prompt_tokens == 1000  # includes cache read + write
    assert response.usage.completion_tokens == 50
    assert response.usage.cache_read_tokens == 600
    assert response.usage.cache_write_tokens == 300
    assert response.usage.reasoning_tokens == 20
    assert response.model == "fake-model"
    assert response.response_id
    assert len(server.model_requests()) == 1
    assert server.model_requests()[0].stream is stream


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
def test_tool_calls_with_arguments(server, make_transport, api, stream):
    transport = make_transport(api)
    server.enqueue(
        Reply.tool_calls(
            [
                ToolCallSpec("todo", {"todos": [{"id": 1, "text": "ünïcode"}]}, id="call_a"),
                ToolCallSpec("read_file", {"path": "/tmp/x"}, id="call_b"),
            ],
            text="Let me check.",
            chunk_size=5,
        )
    )

    response = transport.call(
        transport.build_request(MESSAGES, [TODO_TOOL], SETTINGS), stream=stream
    )

    assert response.finish_reason == "tool_calls"
    assert response.text == "Let me check."
    assert [(c.id, c.name) for c in response.tool_calls] == [
        ("call_a", "todo"),
        ("call_b", "read_file"),
    ]
    assert json.loads(response.tool_calls[0].arguments) == {"todos": [{"id": 1, "text": "ünïcode"}]}
    assert json.loads(response.tool_calls[1].arguments) == {"path": "/tmp/x"}


@pytest.mark.parametrize("api", APIS)
def test_streamed_tool_arguments_kept_verbatim(server, make_transport, api):
    transport = make_transport(api)
    server.enqueue(Reply.tool_call("todo", '{"todos": [1, 2]  }', chunk_size=3))
    response = transport.call(transport.build_request(MESSAGES, [TODO_TOOL], SETTINGS))
    assert response.tool_calls[0].arguments == '{"todos": [1, 2]  }'


@pytest.mark.parametrize("api", APIS)
def test_on_delta_receives_text_in_order(server, make_transport, api):
    transport = make_transport(api)
    text = "The quick brown fox jumps over the lazy dog, twice over."
    server.enqueue(Reply.text(text, reasoning="hmm, a fox", chunk_size=4))
    deltas: list[StreamDelta] = []

    response = transport.call(
        transport.build_request(MESSAGES, None, SETTINGS), stream=True, on_delta=deltas.append
    )

    text_deltas = [d.text for d in deltas if d.kind == "text"]
    assert len(text_deltas) > 5  # really streamed, not one lump
    assert "".join(text_deltas) == text == response.text
    assert "".join(d.text for d in deltas if d.kind == "reasoning") == "hmm, a fox"
    kinds = [d.kind for d in deltas]
    assert kinds.index("reasoning") < kinds.index("text")


@pytest.mark.parametrize("api", APIS)
def test_tool_call_delta_names_the_tool(server, make_transport, api):
    transport = make_transport(api)
    server.enqueue(Reply.tool_call("todo", {"todos": []}))
    deltas: list[StreamDelta] = []
    transport.call(transport.build_request(MESSAGES, [TODO_TOOL], SETTINGS), on_delta=deltas.append)
    assert [d.text for d in deltas if d.kind == "tool_call"] == ["todo"]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
def test_exactly_one_http_request_per_call_even_on_failure(server, make_transport, api, stream):
    transport = make_transport(api)
    server.enqueue(Fault.status(500), Fault.status(429, retry_after=1), Reply.text("ok"))
    request = transport.build_request(MESSAGES, None, SETTINGS)
    for expected in (1, 2):
        with pytest.raises(ProviderError):
            transport.call(request, stream=stream)
        assert len(server.model_requests()) == expected
    assert transport.call(request, stream=stream).text == "ok"
    assert len(server.model_requests()) == 3


@pytest.mark.parametrize("api", APIS)
def test_stream_refusal_falls_back_once_and_is_remembered(server, make_transport, api):
    transport = make_transport(api)
    server.enqueue(Fault.refuse_stream(), Reply.text("first"), Reply.text("second"))
    request = transport.build_request(MESSAGES, None, SETTINGS)

    assert transport.call(request, stream=True).text == "first"
    recorded = server.model_requests()
    assert [r.stream for r in recorded] == [True, False]

    assert transport.call(request, stream=True).text == "second"
    recorded = server.model_requests()
    assert len(recorded) == 3
    assert recorded[2].stream is False  # straight to non-streaming
    assert transport.stream_refused is True  # type: ignore[attr-defined]


@pytest.mark.parametrize("api", APIS)
def test_sends_the_key_and_model_to_the_server(server, make_transport, api):
    transport = make_transport(api, api_key="sk-abc-secret-9999")
    server.enqueue(Reply.text("ok"))
    transport.call(transport.build_request(MESSAGES, None, SETTINGS))
    recorded = server.model_requests()[0]
    assert recorded.model == "fake-model"
    headers = recorded.headers
    assert "sk-abc-secret-9999" in (headers.get("authorization", "") + headers.get("x-api-key", ""))


def test_openai_streaming_asks_for_usage(server, make_transport):
    transport = make_transport("openai")
    server.enqueue(Reply.text("ok"))
    transport.call(transport.build_request(MESSAGES, None, SETTINGS), stream=True)
    body = server.model_requests()[0].body
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 256


def test_openai_compatible_server_gets_max_tokens_and_extra_fields(server):
    from herald.providers.openai_chat import OpenAIChatTransport

    transport = OpenAIChatTransport(
        provider="custom", base_url=server.openai_base_url, api_key=None, timeout=5
    )
    try:
        server.enqueue(Reply.text("ok"))
        settings = CallSettings(model="llama", max_tokens=64, temperature=0.2, extra={"top_k": 20})
        transport.call(transport.build_request(MESSAGES, None, settings))
    finally:
        transport.close()
    body = server.model_requests()[0].body
    assert body["max_tokens"] == 64
    assert body["temperature"] == 0.2
    assert body["top_k"] == 20  # unknown to the SDK, still sent


def test_anthropic_sends_temperature_through_extra_body(server, make_transport):
    transport = make_transport("anthropic")
    server.enqueue(Reply.text("ok"))
    settings = CallSettings(model="claude-fake", temperature=0.3)
    transport.call(transport.build_request(MESSAGES, None, settings))
    body = server.model_requests()[0].body
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 4096  # the API requires one; default when unset
