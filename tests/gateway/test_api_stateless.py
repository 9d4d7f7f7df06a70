"""The OpenAI-compatible API without a session key: the conversation is the request's
messages (OpenAI semantics), one stored Herald session per distinct conversation; and
every refusal is an OpenAI-style JSON error. Through the real `GatewayRunner`, the
official `openai` client and raw HTTP (as curl sends it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from test_api_runner_e2e import AUTH, client
from test_api_runner_e2e import gateway as api_runner

from herald.gateway.platforms.api.adapter import ApiAdapter
from herald.gateway.runner import GatewayRunner
from herald.testing.fake_llm import FakeLLMServer, Fault, RecordedRequest, Reply

# The real runner with the API adapter, served on loopback (shared with the e2e tests).
gateway = api_runner


def conversation(request: RecordedRequest) -> list[tuple[str, str]]:
    """What the model was shown, without the system prompt (and without recall fences)."""
    return [
        (m["role"], str(m.get("content")).split("\n\n<", 1)[0])
        for m in request.messages
        if m.get("role") in ("user", "assistant")
    ]


async def chat(adapter: ApiAdapter, messages: list[dict[str, str]], **kw: Any) -> tuple[str, str]:
    """The reply and the Herald session that answered it."""
    raw = await client(adapter).chat.completions.with_raw_response.create(
        model="herald-x", messages=messages, **kw
    )
    completion = raw.parse()
    return completion.choices[0].message.content or "", raw.headers["X-Herald-Session-Id"]


async def test_a_conversation_without_a_session_key_is_the_requests_messages(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    runner, adapter = gateway
    fake_llm.enqueue(Reply.text("Ahoy!"), Reply.text("Arr, more."), Reply.text("Other."))
    system = {"role": "system", "content": "You talk like a pirate."}
    first = [system, {"role": "user", "content": "hi"}]
    reply, session = await chat(adapter, first)
    assert reply == "Ahoy!"
    requests = fake_llm.model_requests()
    assert "You talk like a pirate." in str(requests[0].system or requests[0].messages[0])

    follow_up = [
        *first,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "more"},
    ]
    reply, same = await chat(adapter, follow_up)
    assert same == session  # the client's whole history, and Herald continued its session
    assert conversation(fake_llm.model_requests()[1]) == [
        ("user", "hi"),
        ("assistant", "Ahoy!"),
        ("user", "more"),
    ]

    _, other = await chat(adapter, [{"role": "user", "content": "unrelated"}])
    assert other != session
    assert conversation(fake_llm.model_requests()[2]) == [("user", "unrelated")]

    store = runner.store_for("default")
    assert [m.content for m in store.get_messages(session)][-1] == "Arr, more."
    assert store.search_messages("unrelated")  # stored and searchable


async def test_history_herald_never_saw_reaches_the_model_as_messages(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    fake_llm.enqueue(Reply.text("first answer"), Reply.text("the edited branch"))
    history = [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "an answer from another model"},
        {"role": "user", "content": "q2"},
    ]
    _, session = await chat(adapter, history)
    assert conversation(fake_llm.model_requests()[0]) == [
        ("user", "q1"),
        ("assistant", "an answer from another model"),
        ("user", "q2"),
    ]
    # The user edits the assistant's answer in their client: a different conversation.
    edited = [history[0], {"role": "assistant", "content": "edited"}, history[2]]
    _, branch = await chat(adapter, edited)
    assert branch != session
    assert ("assistant", "edited") in conversation(fake_llm.model_requests()[1])


async def test_a_streamed_stateless_request_continues_its_conversation(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    fake_llm.enqueue(Reply.text("one two three", chunk_size=3), Reply.text("four", chunk_size=2))
    opening = [{"role": "user", "content": "count"}]
    stream = await client(adapter).chat.completions.create(
        model="herald-x", messages=opening, stream=True
    )
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == "one two three"
    follow = [*opening, {"role": "assistant", "content": text}, {"role": "user", "content": "on"}]
    await chat(adapter, follow)
    assert conversation(fake_llm.model_requests()[1]) == [
        ("user", "count"),
        ("assistant", "one two three"),
        ("user", "on"),
    ]


async def test_the_session_header_still_keeps_herald_memory(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    headers = {"X-Herald-Session": "notes"}
    _, first = await chat(adapter, [{"role": "user", "content": "one"}], extra_headers=headers)
    _, second = await chat(adapter, [{"role": "user", "content": "two"}], extra_headers=headers)
    assert first == second
    assert ("user", "one") in conversation(fake_llm.model_requests()[1])


# ---- errors -------------------------------------------------------------------------------


async def post(adapter: ApiAdapter, content: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(
            f"{adapter.base_url}/chat/completions", content=content, headers={**AUTH, **headers}
        )


def error_of(response: httpx.Response) -> dict[str, Any]:
    assert response.headers["content-type"].startswith("application/json"), response.text
    body = response.json()
    assert set(body["error"]) >= {"message", "type", "param", "code"}
    return body["error"]


async def test_a_body_over_the_limit_gets_an_openai_error_naming_the_limit(
    gateway: tuple[GatewayRunner, ApiAdapter],
) -> None:
    _, adapter = gateway
    big = json.dumps({"messages": [{"role": "user", "content": "x" * (5 * 1024 * 1024)}]})
    response = await post(adapter, big.encode(), {"Content-Type": "application/json"})
    assert response.status_code == 413
    error = error_of(response)
    assert "4 MiB" in error["message"] and error["code"] == "body_too_large"


async def test_a_chunked_body_over_the_limit_gets_the_same_error(
    gateway: tuple[GatewayRunner, ApiAdapter],
) -> None:
    _, adapter = gateway

    async def pieces():  # no Content-Length: the server learns the size while reading
        for _ in range(5):
            yield b"x" * (1024 * 1024)

    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            f"{adapter.base_url}/chat/completions", content=pieces(), headers=AUTH
        )
    assert response.status_code == 413
    assert error_of(response)["code"] == "body_too_large"


async def test_an_empty_body_names_the_missing_field(
    gateway: tuple[GatewayRunner, ApiAdapter],
) -> None:
    _, adapter = gateway
    for body in (b"", b"{}"):
        response = await post(adapter, body, {"Content-Type": "application/json"})
        assert response.status_code == 400
        error = error_of(response)
        assert error["param"] == "messages" and "messages" in error["message"], error


async def test_json_without_a_json_content_type_is_accepted(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    fake_llm.enqueue(Reply.text("curl works"))
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    # curl -d sends application/x-www-form-urlencoded unless told otherwise
    response = await post(adapter, body, {"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "curl works"
    response = await post(adapter, b"not json", {"Content-Type": "text/plain"})
    assert response.status_code == 400 and error_of(response)["param"] == "body"


async def test_unknown_paths_and_methods_are_openai_errors(
    gateway: tuple[GatewayRunner, ApiAdapter],
) -> None:
    _, adapter = gateway
    async with httpx.AsyncClient(timeout=30) as http:
        missing = await http.get(f"{adapter.base_url}/nothing-here", headers=AUTH)
        wrong = await http.get(f"{adapter.base_url}/chat/completions", headers=AUTH)
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
    assert wrong.status_code == 405 and error_of(wrong)["code"] == "method_not_allowed"


async def test_a_retried_stream_never_sends_the_failed_attempts_text(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    fake_llm.enqueue(
        Fault.drop_mid_stream(3, Reply.text("partial0 partial1 partial2 partial3", chunk_size=9)),
        Reply.text("the real answer, streamed in pieces", chunk_size=4),
    )
    stream = await client(adapter).chat.completions.create(
        model="herald-x", messages=[{"role": "user", "content": "go"}], stream=True
    )
    chunks = [c async for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "the real answer, streamed in pieces"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
