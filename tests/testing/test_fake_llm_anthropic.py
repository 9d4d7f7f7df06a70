"""The fake server speaks Anthropic messages well enough for the real SDK."""

from __future__ import annotations

import json

import anthropic
import pytest

from herald.testing.fake_llm import DEFAULT_MODELS, FakeLLMServer, FakeUsage, Reply, ToolCallSpec

USER = [{"role": "user", "content": "hello there"}]


def _create(client: anthropic.Anthropic, **kw: object) -> anthropic.types.Message:
    return client.messages.create(model="claude-test", max_tokens=256, messages=USER, **kw)  # type: ignore[arg-type]


def test_text_reply_non_streaming(server: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    server.enqueue(Reply.text("Hello from the fake model."))

    message = _create(claude)

    assert message.id.startswith("msg_")
    assert message.role == "assistant"
    assert message.model == "claude-test"
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == "Hello from the fake model."  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0


def test_raw_stream_follows_the_real_event_sequence(
    server: FakeLLMServer, claude: anthropic.Anthropic
) -> None:
    text = "Streaming, one small piece at a time."
    server.enqueue(Reply.text(text, chunk_size=4))

    events = list(
        claude.messages.create(model="claude-test", max_tokens=256, messages=USER, stream=True)
    )

    kinds = [event.type for event in events]
    deltas = kinds.count("content_block_delta")
    assert kinds == [
        "message_start",
        "content_block_start",
        *["content_block_delta"] * deltas,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert deltas == -(-len(text) // 4)
    assert "".join(e.delta.text for e in events if e.type == "content_block_delta") == text  # type: ignore[union-attr]
    start = events[0]
    assert start.type == "message_start"
    assert start.message.stop_reason is None
    message_delta = events[-2]
    assert message_delta.type == "message_delta"
    assert message_delta.delta.stop_reason == "end_turn"


def test_stream_helper_assembles_thinking_text_and_tool_use(
    server: FakeLLMServer, claude: anthropic.Anthropic
) -> None:
    server.enqueue(
        Reply.tool_calls(
            [ToolCallSpec("todo", {"todos": [{"text": "ship it", "done": False}]})],
            text="Planning now.",
            reasoning="The user wants a plan.",
            chunk_size=5,
        )
    )

    with claude.messages.stream(model="claude-test", max_tokens=256, messages=USER) as stream:
        text_deltas = list(stream.text_stream)
        message = stream.get_final_message()

    assert "".join(text_deltas) == "Planning now."
    assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
    thinking, text, tool_use = message.content
    assert thinking.thinking == "The user wants a plan."  # type: ignore[union-attr]
    assert thinking.signature  # type: ignore[union-attr]
    assert text.text == "Planning now."  # type: ignore[union-attr]
    assert tool_use.name == "todo"  # type: ignore[union-attr]
    assert tool_use.id.startswith("toolu_")  # type: ignore[union-attr]
    assert tool_use.input == {"todos": [{"text": "ship it", "done": False}]}  # type: ignore[union-attr]
    assert message.stop_reason == "tool_use"


def test_tool_use_non_streaming(server: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    server.enqueue(
        Reply.tool_calls(
            [
                ToolCallSpec("read_file", {"path": "notes.md"}),
                ToolCallSpec("todo", '{"todos": []}', id="toolu_fixed"),
            ]
        )
    )

    message = _create(claude)

    assert message.stop_reason == "tool_use"
    assert [block.type for block in message.content] == ["tool_use", "tool_use"]
    first, second = message.content
    assert first.input == {"path": "notes.md"}  # type: ignore[union-attr]
    assert first.id.startswith("toolu_") and first.id != "toolu_fixed"  # type: ignore[union-attr]
    assert second.id == "toolu_fixed"  # type: ignore[union-attr]
    assert second.input == {"todos": []}  # type: ignore[union-attr]


def test_tool_input_streams_as_json_fragments(
    server: FakeLLMServer, claude: anthropic.Anthropic
) -> None:
    arguments = {"query": "weather in Lisbon", "days": 3}
    server.enqueue(Reply.tool_call("search", arguments, chunk_size=7))

    events = list(
        claude.messages.create(model="claude-test", max_tokens=256, messages=USER, stream=True)
    )

    starts = [e for e in events if e.type == "content_block_start"]
    assert len(starts) == 1
    assert starts[0].content_block.type == "tool_use"
    assert starts[0].content_block.name == "search"  # type: ignore[union-attr]
    fragments = [
        e.delta.partial_json  # type: ignore[union-attr]
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    ]
    assert len(fragments) > 2
    assert json.loads("".join(fragments)) == arguments


def test_invalid_json_arguments_stream_verbatim(
    server: FakeLLMServer, claude: anthropic.Anthropic
) -> None:
    broken = '{"path": "a.txt", '
    server.enqueue(Reply.tool_call("read_file", broken))

    events = list(
        claude.messages.create(model="claude-test", max_tokens=256, messages=USER, stream=True)
    )

    joined = "".join(
        e.delta.partial_json  # type: ignore[union-attr]
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    )
    assert joined == broken


def test_usage_with_cache_fields(server: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    usage = FakeUsage(1000, 40, cache_read_tokens=700, cache_write_tokens=200, reasoning_tokens=10)
    server.enqueue(Reply.text("a", usage=usage), Reply.text("b", usage=usage))

    plain = _create(claude).usage
    with claude.messages.stream(model="claude-test", max_tokens=256, messages=USER) as stream:
        events = list(stream)
        streamed = stream.get_final_message().usage

    for reported in (plain, streamed):
        assert reported.input_tokens == 100  # the uncached remainder
        assert reported.cache_read_input_tokens == 700
        assert reported.cache_creation_input_tokens == 200
        assert reported.output_tokens == 40
    start = next(e for e in events if e.type == "message_start")
    assert start.message.usage.cache_read_input_tokens == 700  # type: ignore[union-attr]
    assert plain.output_tokens_details is not None
    assert plain.output_tokens_details.thinking_tokens == 10


def test_stop_reason_is_mapped_from_either_vocabulary(
    server: FakeLLMServer, claude: anthropic.Anthropic
) -> None:
    server.enqueue(
        Reply.text("cut", finish_reason="length"), Reply.text("cut", finish_reason="max_tokens")
    )

    assert _create(claude).stop_reason == "max_tokens"
    assert _create(claude).stop_reason == "max_tokens"


def test_models_list_in_anthropic_shape(server: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    page = claude.models.list()

    assert [model.id for model in page.data] == list(DEFAULT_MODELS)
    assert all(model.type == "model" for model in page.data)
    assert claude.models.retrieve("fake-model-mini").id == "fake-model-mini"
    with pytest.raises(anthropic.NotFoundError):
        claude.models.retrieve("no-such-model")
