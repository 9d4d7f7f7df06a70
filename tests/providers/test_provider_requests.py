"""Request building: OpenAI byte stability, Anthropic message conversion and cache
breakpoints — asserted on what the fake server actually received."""

from __future__ import annotations

import copy
import json

from herald.providers.anthropic_convert import convert_messages
from herald.providers.base import CallSettings
from herald.testing.fake_llm import Reply

SETTINGS = CallSettings(model="fake-model")


def _history() -> list[dict]:
    return [
        {"role": "system", "content": "You are Herald.  \n"},
        {"role": "user", "content": "List my todos.\n\n"},
        {
            "role": "assistant",
            "content": "Checking.  ",
            "reasoning": "private chain of thought",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "todo", "arguments": '{ "z": 1,  "a": {"y": 2, "b": 3} }'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "shell", "arguments": "not json {"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"todos": []}  \n'},
        {"role": "tool", "tool_call_id": "call_2", "content": "error: bad args"},
        {"role": "user", "content": [{"type": "text", "text": "Thanks!   "}]},
    ]


# -- OpenAI ----------------------------------------------------------------------


def test_openai_request_is_canonical_and_caller_list_untouched(server, make_transport):
    transport = make_transport("openai")
    history = _history()
    snapshot = copy.deepcopy(history)

    request = transport.build_request(history, None, SETTINGS)

    assert history == snapshot  # not mutated
    messages = request["messages"]
    calls = messages[2]["tool_calls"]
    assert calls[0]["function"]["arguments"] == '{"a":{"b":3,"y":2},"z":1}'
    assert calls[1]["function"]["arguments"] == "not json {"  # verbatim when not JSON
    assert messages[0]["content"] == "You are Herald.  \n"  # the frozen system prompt: verbatim
    assert messages[1]["content"] == "List my todos."
    assert messages[2]["content"] == "Checking."
    assert "reasoning" not in messages[2]
    assert messages[3]["content"] == '{"todos": []}'
    assert messages[5]["content"] == [{"type": "text", "text": "Thanks!"}]

    # What reaches the server is the same canonical text, byte for byte.
    server.enqueue(Reply.text("ok"), Reply.text("ok"))
    transport.call(request)
    transport.call(transport.build_request(_history(), None, SETTINGS))
    first, second = server.model_requests()
    assert first.body["messages"] == second.body["messages"]
    sent_args = first.body["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert sent_args == '{"a":{"b":3,"y":2},"z":1}'


def test_openai_same_history_different_spacing_same_bytes(make_transport):
    transport = make_transport("openai")
    a = _history()
    b = _history()
    b[2]["tool_calls"][0]["function"]["arguments"] = '{"a":{"b":3,"y":2},"z":1}'
    b[1]["content"] = "List my todos."
    dump = lambda req: json.dumps(req["messages"])  # noqa: E731
    assert dump(transport.build_request(a, None, SETTINGS)) == dump(
        transport.build_request(b, None, SETTINGS)
    )


# -- Anthropic ---------------------------------------------------------------------


def test_anthropic_conversion_as_received_by_server(server, make_transport):
    transport = make_transport("anthropic")
    history = _history()
    snapshot = copy.deepcopy(history)
    server.enqueue(Reply.text("ok"))

    tools = [
        {
            "type": "function",
            "function": {
                "name": "todo",
                "description": "Track todos.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    transport.call(transport.build_request(history, tools, SETTINGS))
    assert history == snapshot

    body = server.model_requests()[0].body
    assert body["system"] == [
        {"type": "text", "text": "You are Herald.  \n", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"] == [
        {
            "name": "todo",
            "input_schema": {"type": "object", "properties": {}},
            "description": "Track todos.",
        }
    ]
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]

    assistant = messages[1]["content"]
    assert assistant[0] == {"type": "text", "text": "Checking."}  # reasoning dropped
    assert assistant[1] == {
        "type": "tool_use",
        "id": "call_1",
        "name": "todo",
        "input": {"z": 1, "a": {"y": 2, "b": 3}},
    }
    assert assistant[2]["input"] == {"_raw": "not json {"}

    # Both tool results and the next user text merged into one user turn,
    # tool results first, the last block a cache breakpoint.
    last = messages[2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert last[0]["tool_use_id"] == "call_1"
    assert last[0]["content"] == '{"todos": []}'
    assert last[1]["tool_use_id"] == "call_2"
    assert last[2]["text"] == "Thanks!"
    assert last[2]["cache_control"] == {"type": "ephemeral"}
    assert messages[0]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_anthropic_cache_breakpoints_only_on_last_two_user_turns():
    from herald.providers.anthropic_convert import add_cache_breakpoints

    history = [{"role": "system", "content": "sys"}]
    for i in range(4):
        history.append({"role": "user", "content": f"question {i}"})
        history.append({"role": "assistant", "content": f"answer {i}"})
    history.append({"role": "user", "content": "final"})
    system, turns = convert_messages(history)
    add_cache_breakpoints(system, turns)

    def marked(block: dict) -> bool:
        return "cache_control" in block

    marks = [
        (turn["role"], block["text"])
        for turn in turns
        for block in turn["content"]
        if marked(block)
    ]
    assert marks == [("user", "question 3"), ("user", "final")]
    assert all(marked(b) for b in system[-1:])
    total = len(marks) + sum(marked(b) for b in system)
    assert total <= 4


def test_anthropic_role_merging_and_leading_assistant():
    system, turns = convert_messages(
        [
            {"role": "assistant", "content": "I start."},
            {"role": "assistant", "content": "And continue."},
            {"role": "user", "content": "one"},
            {"role": "user", "content": ""},
            {"role": "system", "content": "late system note"},
            {"role": "assistant", "content": "   "},  # nothing in it: dropped
            {"role": "user", "content": "two"},
        ]
    )
    assert system == [{"type": "text", "text": "late system note"}]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[0]["content"][0]["text"] == "(conversation start)"
    assert [b["text"] for b in turns[1]["content"]] == ["I start.", "And continue."]
    assert [b["text"] for b in turns[2]["content"]] == ["one", "(empty message)", "two"]


def test_anthropic_image_parts_are_converted():
    _, turns = convert_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                    {"type": "image_url", "image_url": {"url": "https://example.com/a.jpg"}},
                ],
            }
        ]
    )
    blocks = turns[0]["content"]
    assert blocks[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
    }
    assert blocks[2]["source"] == {"type": "url", "url": "https://example.com/a.jpg"}
