"""The API adapter driven by the official `openai` client against the running server
(a real uvicorn server on loopback, real Agent turns against the fake LLM)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_api_harness import Running, running_adapter

from herald.testing.fake_llm import FakeLLMServer, FakeUsage, Reply
from herald.testing.strong_secrets import API_KEY


@pytest.fixture
def api(tmp_path: Path, fake_llm: FakeLLMServer) -> Iterator[Running]:
    gateway = {
        "api": {
            "enabled": True,
            "port": 0,
            "api_key": "${HERALD_API_KEY}",
            "model_name": "herald-test",
        }
    }
    with running_adapter(
        tmp_path, fake_llm, "api", gateway, env={"HERALD_API_KEY": API_KEY}
    ) as running:
        yield running


def client_for(api: Running, key: str = API_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{api.url}/v1", api_key=key, max_retries=0, timeout=30)


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.messages if m.get("role") == "user"]


def test_non_streaming_reply_with_usage(api: Running, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(Reply.text("Hello from the model", usage=FakeUsage(120, 7)))
    completion = client_for(api).chat.completions.create(
        model="anything", messages=[{"role": "user", "content": "hi there"}]
    )
    assert completion.object == "chat.completion"
    assert completion.model == "herald-test"
    assert completion.choices[0].message.role == "assistant"
    assert completion.choices[0].message.content == "Hello from the model"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (120, 7)
    assert completion.usage.total_tokens == 127
    (request,) = fake_llm.model_requests()
    assert user_texts(request)[-1].startswith("hi there")


def test_streaming_reply_in_chunks_with_usage(api: Running, fake_llm: FakeLLMServer) -> None:
    text = "Streaming works, piece by piece, over server-sent events."
    fake_llm.enqueue(Reply.text(text, chunk_size=5, usage=FakeUsage(50, 12)))
    stream = client_for(api).chat.completions.create(
        model="herald-test",
        messages=[{"role": "user", "content": "stream please"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert "".join(pieces) == text
    assert sum(1 for p in pieces if p) > 1  # really streamed, not one blob
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop" and finishes.count("stop") == 1
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 12


def test_streaming_without_usage_option_has_no_usage(api: Running, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(Reply.text("short"))
    chunks = list(
        client_for(api).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "short"
    assert all(c.usage is None for c in chunks)


def test_client_hanging_up_mid_stream_does_not_lose_the_reply(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("a slow answer " * 8, chunk_size=4, chunk_delay=0.02))
    body = {
        "model": "m",
        "user": "quitter",
        "stream": True,
        "messages": [{"role": "user", "content": "take your time"}],
    }
    headers = {"Authorization": f"Bearer {API_KEY}"}
    with httpx.stream(
        "POST", f"{api.url}/v1/chat/completions", json=body, headers=headers, timeout=30
    ) as response:
        assert response.status_code == 200
        next(response.iter_lines())  # the opening chunk, then hang up
    for _ in range(200):  # the turn goes on and stores its reply
        if api.sink.dispatched and api.sink.dispatched[0].session_id:
            break
        time.sleep(0.02)
    session_id = api.sink.dispatched[0].session_id
    assert session_id is not None
    stored = api.store.get_messages(session_id)
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[-1].content == "a slow answer " * 8
