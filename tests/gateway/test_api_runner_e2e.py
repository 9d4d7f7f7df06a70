"""The API adapter end to end through the real `GatewayRunner`: built by the
lifecycle's `load_adapters` from config, driven by the official `openai` client
(async, on the runner's own loop), real turns against the fake LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import openai
import pytest

from herald.config import Settings
from herald.gateway.lifecycle import load_adapters
from herald.gateway.platforms.api.adapter import ApiAdapter
from herald.gateway.runner import GatewayRunner
from herald.testing.fake_llm import FakeLLMServer, FakeUsage, RecordedRequest, Reply
from herald.testing.strong_secrets import API_KEY

AUTH = {"Authorization": f"Bearer {API_KEY}"}


@pytest.fixture
async def gateway(
    gateway_settings: Callable[..., Settings],
) -> AsyncIterator[tuple[GatewayRunner, ApiAdapter]]:
    api = {"enabled": True, "port": 0, "api_key": "${HERALD_API_KEY}", "model_name": "herald-e2e"}
    settings = gateway_settings({"platforms": {"api": api}}, env={"HERALD_API_KEY": API_KEY})
    adapters, problems = load_adapters(settings)
    assert problems == []
    (adapter,) = adapters
    assert isinstance(adapter, ApiAdapter)
    runner = GatewayRunner({"default": settings}, adapters)
    await adapter.connect(runner)
    yield runner, adapter
    await runner.shutdown(0, grace=5)
    await adapter.disconnect()


def client(adapter: ApiAdapter) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=adapter.base_url, api_key=API_KEY, max_retries=0, timeout=30)


def history(request: RecordedRequest) -> str:
    return "\n".join(str(m.get("content")) for m in request.messages if m.get("role") != "system")


async def ask(adapter: ApiAdapter, text: str, **kw: Any) -> str:
    completion = await client(adapter).chat.completions.create(
        model="herald-e2e", messages=[{"role": "user", "content": text}], **kw
    )
    return completion.choices[0].message.content or ""


async def test_openai_client_streaming_and_not_through_the_runner(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    fake_llm.enqueue(
        Reply.text("A plain answer.", usage=FakeUsage(40, 4)),
        Reply.text("A streamed answer, in several pieces.", chunk_size=4, usage=FakeUsage(60, 9)),
    )
    completion = await client(adapter).chat.completions.create(
        model="herald-e2e", messages=[{"role": "user", "content": "plain please"}]
    )
    assert completion.choices[0].message.content == "A plain answer."
    assert completion.model == "herald-e2e"
    assert completion.usage is not None and completion.usage.total_tokens == 44

    stream = await client(adapter).chat.completions.create(
        model="herald-e2e",
        messages=[{"role": "user", "content": "stream please"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "A streamed answer, in several pieces."
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) > 1
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 9
    # No session key: two separate conversations, never one shared default session.
    assert "plain please" not in history(fake_llm.model_requests()[1])


async def test_sessions_by_user_and_header_stay_apart(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    await ask(adapter, "I am Alice", user="alice")
    await ask(adapter, "I am Bob", extra_headers={"X-Herald-Session": "bob"})
    await ask(adapter, "who am I?", user="alice")
    await ask(adapter, "and me?", user="alice", extra_headers={"X-Herald-Session": "bob"})
    requests = fake_llm.model_requests()
    assert "I am Alice" in history(requests[2]) and "Bob" not in history(requests[2])
    assert "I am Bob" in history(requests[3]) and "Alice" not in history(requests[3])


async def test_session_endpoints_and_posting_into_a_stored_session(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    runner, adapter = gateway
    fake_llm.enqueue(Reply.text("Noted."), Reply.text("You said the code word is kumquat."))
    await ask(adapter, "the code word is kumquat", user="notes")
    async with httpx.AsyncClient(base_url=adapter.base_url, headers=AUTH, timeout=30) as http:
        listed = (await http.get("/sessions", params={"source": "api"})).json()["data"]
        assert len(listed) == 1
        session_id = listed[0]["id"]
        shown = (await http.get(f"/sessions/{session_id}")).json()
        assert [m["role"] for m in shown["messages"]] == ["user", "assistant"]
        posted = await http.post(
            f"/sessions/{session_id}/messages", json={"content": "what was the code word?"}
        )
        assert posted.status_code == 200, posted.text
        assert posted.json()["content"] == "You said the code word is kumquat."
        assert posted.json()["session_id"] == session_id
    assert "the code word is kumquat" in history(fake_llm.model_requests()[-1])
    stored = runner.store_for("default").get_messages(session_id)
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]


async def test_slash_command_answers_and_new_starts_a_fresh_session(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    await ask(adapter, "remember: blue", user="u")
    notice = await ask(adapter, "/new", user="u")
    assert notice  # the command's own answer comes back as the reply
    await ask(adapter, "what colour?", user="u")
    assert "remember: blue" not in history(fake_llm.model_requests()[-1])
    stream = await client(adapter).chat.completions.create(
        model="herald-e2e", messages=[{"role": "user", "content": "/help"}], stream=True
    )
    streamed = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert "/new" in streamed  # a command's output, streamed although no model ran


async def test_leading_system_message_reaches_the_prompt(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    await client(adapter).chat.completions.create(
        model="herald-e2e",
        user="pirate",
        messages=[
            {"role": "system", "content": "Answer like a pirate."},
            {"role": "user", "content": "hello"},
        ],
    )
    assert "Answer like a pirate." in (fake_llm.model_requests()[0].system or "")
