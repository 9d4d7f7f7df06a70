"""The fake server speaks OpenAI chat-completions well enough for the real SDK."""

from __future__ import annotations

import json
import math

import openai
import pytest

from herald.testing.fake_llm import DEFAULT_MODELS, FakeLLMServer, FakeUsage, Reply, ToolCallSpec

USER = [{"role": "user", "content": "hello there"}]


def test_text_reply_non_streaming(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    server.enqueue(Reply.text("Hello from the fake model."))

    completion = oai.chat.completions.create(model="gpt-test", messages=USER)

    choice = completion.choices[0]
    assert choice.message.content == "Hello from the fake model."
    assert choice.message.role == "assistant"
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert completion.model == "gpt-test"
    assert completion.id.startswith("chatcmpl-")
    usage = completion.usage
    assert usage is not None
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_text_reply_streams_in_chunks_of_chunk_size(
    server: FakeLLMServer, oai: openai.OpenAI
) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    server.enqueue(Reply.text(text, chunk_size=5))

    chunks = list(oai.chat.completions.create(model="gpt-test", messages=USER, stream=True))

    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert "".join(pieces) == text
    assert len(pieces) == math.ceil(len(text) / 5)
    assert all(len(piece) <= 5 for piece in pieces)
    assert chunks[-1].choices[0].finish_reason == "stop"
    # Without stream_options.include_usage there is no usage chunk.
    assert all(c.usage is None and c.choices for c in chunks)
    assert len({c.id for c in chunks}) == 1


def test_stream_usage_chunk_reports_cached_and_reasoning_tokens(
    server: FakeLLMServer, oai: openai.OpenAI
) -> None:
    usage = FakeUsage(1200, 80, cache_read_tokens=1000, cache_write_tokens=50, reasoning_tokens=30)
    server.enqueue(Reply(text="ok", reasoning="thinking...", usage=usage))

    chunks = list(
        oai.chat.completions.create(
            model="gpt-test",
            messages=USER,
            stream=True,
            stream_options={"include_usage": True},
        )
    )

    final = chunks[-1]
    assert final.choices == []
    assert final.usage is not None
    assert final.usage.prompt_tokens == 1200
    assert final.usage.completion_tokens == 80
    assert final.usage.total_tokens == 1280
    assert final.usage.prompt_tokens_details is not None
    assert final.usage.prompt_tokens_details.cached_tokens == 1000
    assert final.usage.completion_tokens_details is not None
    assert final.usage.completion_tokens_details.reasoning_tokens == 30
    assert all(c.usage is None for c in chunks[:-1])


def test_non_streaming_usage_reports_cached_tokens(
    server: FakeLLMServer, oai: openai.OpenAI
) -> None:
    server.enqueue(Reply.text("ok", usage=FakeUsage(500, 10, cache_read_tokens=400)))

    usage = oai.chat.completions.create(model="gpt-test", messages=USER).usage

    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens) == (500, 10)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 400


def test_estimated_usage_grows_with_the_prompt(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    short = oai.chat.completions.create(model="m", messages=USER).usage
    long_messages = [{"role": "user", "content": "word " * 2000}]
    long = oai.chat.completions.create(model="m", messages=long_messages).usage

    assert short is not None and long is not None
    # ~4 characters per token: 10,000 characters of prompt is ~2,500 tokens.
    assert 2000 < long.prompt_tokens < 3500
    assert short.prompt_tokens < 100


def test_tool_calls_non_streaming(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    server.enqueue(
        Reply.tool_calls(
            [
                ToolCallSpec("todo", {"todos": [{"id": 1, "text": "write tests"}]}),
                ToolCallSpec("read_file", {"path": "a.txt"}, id="call_fixed"),
            ]
        )
    )

    completion = oai.chat.completions.create(model="m", messages=USER)

    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "tool_calls"
    assert message.content is None
    assert message.tool_calls is not None
    first, second = message.tool_calls
    assert first.id.startswith("call_") and first.id != "call_fixed"
    assert first.function.name == "todo"
    assert json.loads(first.function.arguments) == {"todos": [{"id": 1, "text": "write tests"}]}
    assert second.id == "call_fixed"
    assert json.loads(second.function.arguments) == {"path": "a.txt"}


def test_tool_calls_stream_incrementally(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    arguments = {"query": "weather in Lisbon", "days": 3}
    server.enqueue(
        Reply.tool_calls(
            [ToolCallSpec("search", arguments), ToolCallSpec("todo", {"todos": []})],
            text="Let me look.",
            chunk_size=6,
        )
    )

    chunks = list(oai.chat.completions.create(model="m", messages=USER, stream=True))

    fragments = [
        call for c in chunks if c.choices for call in (c.choices[0].delta.tool_calls or [])
    ]
    by_index: dict[int, list] = {}
    for fragment in fragments:
        by_index.setdefault(fragment.index, []).append(fragment)
    assert sorted(by_index) == [0, 1]
    for index, name, expected in ((0, "search", arguments), (1, "todo", {"todos": []})):
        opening, *rest = by_index[index]
        assert opening.id is not None and opening.id.startswith("call_")
        assert opening.function is not None and opening.function.name == name
        assert len(rest) > 1 if index == 0 else len(rest) >= 1
        assert all(f.id is None and f.function.name is None for f in rest)
        joined = "".join(f.function.arguments or "" for f in [opening, *rest])
        assert json.loads(joined) == expected
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Let me look."
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_sdk_stream_helper_assembles_tool_calls_and_reasoning(
    server: FakeLLMServer, oai: openai.OpenAI
) -> None:
    server.enqueue(
        Reply.tool_call("todo", {"todos": ["a", "b"]}).replace(reasoning="I should plan first.")
    )

    with oai.chat.completions.stream(model="m", messages=USER) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()

    message = final.choices[0].message
    assert message.tool_calls is not None
    assert message.tool_calls[0].function.name == "todo"
    assert json.loads(message.tool_calls[0].function.arguments) == {"todos": ["a", "b"]}
    assert (message.model_extra or {}).get("reasoning_content") == "I should plan first."


def test_string_arguments_are_sent_verbatim(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    broken = '{"path": "a.txt", '
    server.enqueue(Reply.tool_call("read_file", broken), Reply.tool_call("read_file", broken))

    plain = oai.chat.completions.create(model="m", messages=USER)
    streamed = list(oai.chat.completions.create(model="m", messages=USER, stream=True))

    assert plain.choices[0].message.tool_calls is not None
    assert plain.choices[0].message.tool_calls[0].function.arguments == broken
    joined = "".join(
        call.function.arguments or ""
        for c in streamed
        if c.choices
        for call in (c.choices[0].delta.tool_calls or [])
        if call.function is not None
    )
    assert joined == broken


def test_reasoning_content_on_message_and_deltas(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    reasoning = "First, consider the question carefully."
    server.enqueue(Reply(text="42", reasoning=reasoning), Reply(text="42", reasoning=reasoning))

    plain = oai.chat.completions.create(model="m", messages=USER).choices[0].message
    chunks = list(oai.chat.completions.create(model="m", messages=USER, stream=True))

    assert (plain.model_extra or {}).get("reasoning_content") == reasoning
    assert plain.content == "42"
    streamed = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
        for c in chunks
        if c.choices
    )
    assert streamed == reasoning


def test_finish_reason_is_mapped_from_either_vocabulary(
    server: FakeLLMServer, oai: openai.OpenAI
) -> None:
    server.enqueue(
        Reply.text("cut", finish_reason="length"),
        Reply.text("cut", finish_reason="max_tokens"),
        Reply.text("x", model="other-model"),
    )

    first = oai.chat.completions.create(model="m", messages=USER)
    second = oai.chat.completions.create(model="m", messages=USER)
    third = oai.chat.completions.create(model="m", messages=USER)

    assert first.choices[0].finish_reason == "length"
    assert second.choices[0].finish_reason == "length"
    assert third.model == "other-model"


def test_models_list(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    models = oai.models.list()

    assert [model.id for model in models.data] == list(DEFAULT_MODELS)
    assert oai.models.retrieve("fake-model").id == "fake-model"
    with pytest.raises(openai.NotFoundError):
        oai.models.retrieve("no-such-model")
    assert [r.api for r in server.requests] == ["models", "models", "models"]
    assert server.model_requests() == []
