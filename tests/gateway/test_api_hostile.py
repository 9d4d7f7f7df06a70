"""The HTTP API under hostile input, through the real runner (issue 30): a huge body is
refused by its Content-Length unread, a deep one before parsing, a request of 50,000
tiny messages by the per-request message limit, and the history a stateless request
carries within the limit is stored in one go; no redirect comes from the Host header."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from test_api_runner_e2e import API_KEY, AUTH
from test_api_runner_e2e import gateway as api_runner

from herald.gateway.platforms.api.adapter import ApiAdapter
from herald.gateway.platforms.api.models import MAX_MESSAGES
from herald.gateway.runner import GatewayRunner
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.raw_http import MIB, chunked, send_until_answered, status_of

gateway = api_runner


async def _post(adapter: ApiAdapter, body: bytes) -> httpx.Response:
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.post(
            f"{adapter.base_url}/chat/completions",
            content=body,
            headers={**AUTH, "Content-Type": "application/json"},
        )


def _head(adapter: ApiAdapter, extra: str) -> str:
    return (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {API_KEY}\r\n{extra}\r\n"
    )


async def test_a_huge_body_is_refused_by_its_length_before_a_byte_is_read(
    gateway: tuple[GatewayRunner, ApiAdapter],
) -> None:
    _, adapter = gateway
    port = int(adapter.base_url.split(":")[2].split("/")[0])
    head = _head(adapter, f"Content-Length: {200 * MIB}\r\n")
    answer, sent = await asyncio.to_thread(send_until_answered, port, head, iter(()))
    assert sent == 0 and status_of(answer) == 413 and b"4 MiB" in answer
    head = _head(adapter, "Transfer-Encoding: chunked\r\n")
    answer, sent = await asyncio.to_thread(send_until_answered, port, head, chunked(200 * MIB))
    assert status_of(answer) == 413 and sent < 200 * MIB
    bad = _head(adapter, "Content-Length: 12abc\r\n")
    answer, _ = await asyncio.to_thread(send_until_answered, port, bad, iter(()))
    assert status_of(answer) == 400  # h11 itself refuses it, before any app


async def test_deep_json_is_a_400_naming_the_limit(
    gateway: tuple[GatewayRunner, ApiAdapter],
) -> None:
    _, adapter = gateway
    response = await _post(adapter, b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    assert response.status_code == 400
    assert "64 levels" in response.json()["error"]["message"]


async def test_fifty_thousand_tiny_messages_are_refused_by_the_message_limit(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    messages = [{"role": "user" if i % 2 else "assistant", "content": "x"} for i in range(50_000)]
    messages.append({"role": "user", "content": "and now?"})
    body = json.dumps({"model": "m", "messages": messages}).encode()
    assert len(body) < 4 * MIB  # under the byte limit: the message limit is what refuses it
    response = await _post(adapter, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "messages" and str(MAX_MESSAGES) in error["message"]
    assert fake_llm.model_requests() == []


async def test_a_long_stateless_history_within_the_limit_is_stored_and_answered(
    gateway: tuple[GatewayRunner, ApiAdapter], fake_llm: FakeLLMServer
) -> None:
    _, adapter = gateway
    fake_llm.enqueue(Reply.text("read it all"))
    count = MAX_MESSAGES - 1
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(count)
    ]
    messages.append({"role": "user", "content": "and now?"})
    response = await _post(adapter, json.dumps({"messages": messages}).encode())
    assert response.status_code == 200, response.text
    # (a history this long is compressed first; which scripted reply answers is not the point)
    assert response.json()["choices"][0]["message"]["content"]
    sid = response.headers["X-Herald-Session-Id"]
    stored = adapter.store().get_messages(sid, include_inactive=True)  # compression archives
    assert [m.content for m in stored[:count]] == [m["content"] for m in messages[:count]]
    assert [m.seq for m in stored] == list(range(1, len(stored) + 1))


async def test_no_redirect_is_built_from_the_host_header(
    gateway: tuple[GatewayRunner, ApiAdapter],
) -> None:
    _, adapter = gateway
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.get(
            f"{adapter.base_url}/models/", headers={**AUTH, "Host": "evil.example"}
        )
    assert response.status_code == 404
    assert "location" not in response.headers
