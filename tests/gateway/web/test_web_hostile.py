"""The web chat under hostile input, through the real gateway (issue 30): bodies are
refused by their declared length before they are read and cut while they stream,
logins are throttled by the real peer address (and in total) with scrypt off the event
loop, uploads cannot write through a symlink, bad ids are 400s and no redirect is built
from the Host header."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from web_support import login

from herald.config import Settings
from herald.gateway.lifecycle import load_adapters
from herald.gateway.platforms.web import auth, create_token
from herald.gateway.platforms.web.adapter import WebAdapter
from herald.gateway.platforms.web.app import JSON_BODY_BYTES, LOGIN_BODY_BYTES
from herald.gateway.platforms.web.auth import LoginThrottle
from herald.gateway.runner import GatewayRunner
from herald.testing.raw_http import MIB, chunked, send_until_answered, status_of

CHAT = "chat-0123456789"


@pytest.fixture
async def web(
    gateway_settings: Callable[..., Settings], request: pytest.FixtureRequest
) -> AsyncIterator[tuple[WebAdapter, str, httpx.AsyncClient]]:
    extra = getattr(request, "param", {})  # more gateway settings
    settings = gateway_settings({"platforms": {"web": {"enabled": True, "port": 0}}, **extra})
    token = create_token(settings.home.root)
    adapters, problems = load_adapters(settings)
    assert problems == []
    (adapter,) = adapters
    assert isinstance(adapter, WebAdapter)
    runner = GatewayRunner({"default": settings}, adapters)
    await adapter.connect(runner)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{adapter.port}", timeout=30) as client:
        yield adapter, token, client
    await runner.shutdown(0, grace=5)
    await adapter.disconnect()


async def _raw(port: int, head: str, chunks: Iterator[bytes]) -> tuple[bytes, int]:
    return await asyncio.to_thread(send_until_answered, port, head, chunks)


async def test_a_login_body_over_its_limit_is_refused_unread(web) -> None:
    adapter, _token, _client = web
    head = (
        "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {300 * MIB}\r\n\r\n"
    )
    answer, sent = await _raw(adapter.port, head, iter(()))  # not one body byte sent
    assert sent == 0 and status_of(answer) == 413
    assert b"4 KiB" in answer


async def test_a_chunked_login_body_is_cut_while_it_streams(web) -> None:
    adapter, _token, _client = web
    head = "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer, sent = await _raw(adapter.port, head, chunked(300 * MIB))
    assert status_of(answer) == 413 and b"4 KiB" in answer
    assert sent < 300 * MIB  # the server answered long before the body ended
    assert LOGIN_BODY_BYTES < 64 * 1024


async def test_json_routes_refuse_big_bodies_before_parsing_and_after_auth(web) -> None:
    adapter, token, client = web
    csrf = await login(client, token)
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    url = f"/api/chats/{CHAT}/messages"
    declared = (
        f"POST {url} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
        f"X-CSRF-Token: {csrf}\r\nContent-Length: {200 * MIB}\r\n\r\n"
    )
    answer, sent = await _raw(adapter.port, declared, iter(()))
    assert sent == 0 and status_of(answer) == 413 and b"1 MiB" in answer
    streamed = (
        f"POST {url} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
        f"X-CSRF-Token: {csrf}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    answer, sent = await _raw(adapter.port, streamed, chunked(200 * MIB))
    assert status_of(answer) == 413 and sent < 200 * MIB
    assert JSON_BODY_BYTES == MIB
    stranger = f"POST {url} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {200 * MIB}\r\n\r\n"
    answer, _ = await _raw(adapter.port, stranger, iter(()))
    assert status_of(answer) == 401  # who you are is checked before how big your body is


async def test_deep_json_is_a_400_naming_the_limit(web) -> None:
    _adapter, token, client = web
    csrf = await login(client, token)
    deep = "[" * 5000 + "]" * 5000
    response = await client.post(
        f"/api/chats/{CHAT}/messages",
        content=deep,
        headers={"X-CSRF-Token": csrf, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert "deeper than the limit of 16 levels" in response.json()["error"]
    memory = await client.post(
        "/api/memory/memory",
        content='{"action": "add", "content": "[[[[[[[[[[[[[[[[[[[[[[ in a string"}',
        headers={"X-CSRF-Token": csrf, "Content-Type": "application/json"},
    )
    assert memory.status_code == 200  # brackets inside strings do not count


async def test_forwarded_for_does_not_choose_the_throttled_address(web) -> None:
    _adapter, token, client = web
    for n in range(5):
        wrong = await client.post(
            "/login", json={"token": "guess"}, headers={"X-Forwarded-For": f"10.0.0.{n}"}
        )
        assert wrong.status_code == 401
    limited = await client.post(
        "/login", json={"token": token}, headers={"X-Forwarded-For": "10.9.9.9"}
    )
    assert limited.status_code == 429


@pytest.mark.parametrize("web", [{"trusted_proxies": ["127.0.0.1"]}], indirect=True)
async def test_a_trusted_proxy_s_forwarded_for_is_the_client(web) -> None:
    _adapter, token, client = web
    for _ in range(5):
        wrong = await client.post(
            "/login", json={"token": "guess"}, headers={"X-Forwarded-For": "10.0.0.1"}
        )
        assert wrong.status_code == 401
    assert (await client.post("/login", json={"token": "guess"},
                              headers={"X-Forwarded-For": "10.0.0.1"})).status_code == 429  # fmt: skip
    other = await client.post(
        "/login", json={"token": token}, headers={"X-Forwarded-For": "10.0.0.2"}
    )
    assert other.status_code == 200  # another client behind the proxy is not locked out


async def test_scrypt_runs_off_the_event_loop_and_parallel_guesses_are_charged_first(
    web, monkeypatch: pytest.MonkeyPatch
) -> None:
    _adapter, _token, client = web
    threads: list[str] = []
    original = auth._digest

    def observed(token: str, salt: bytes) -> bytes:
        threads.append(threading.current_thread().name)
        return original(token, salt)

    monkeypatch.setattr(auth, "_digest", observed)
    answers = await asyncio.gather(
        *(client.post("/login", json={"token": f"guess-{n}"}) for n in range(20))
    )
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [401] * 5 + [429] * 15
    assert len(threads) == 5  # a throttled attempt never reaches scrypt
    assert all(name.startswith(auth.SCRYPT_THREAD) for name in threads), threads


def test_the_global_failure_budget_stops_a_flood_from_many_addresses() -> None:
    throttle = LoginThrottle(5, global_attempts=12)
    waits = [throttle.charge(f"10.0.{n // 250}.{n % 250}") for n in range(40)]
    assert waits[:12] == [0.0] * 12
    assert all(w > 0 for w in waits[12:])
    throttle.succeeded("10.0.0.3")  # a success hands its own charge back
    assert throttle.charge("10.1.1.1") == 0.0


async def test_uploads_never_write_through_a_symlink(web, workdir: Path, tmp_path: Path) -> None:
    _adapter, token, client = web
    csrf = await login(client, token)
    outside = tmp_path / "outside"
    outside.mkdir()
    (workdir / "notes.txt").symlink_to(outside / "planted.txt")  # dangling
    (workdir / "live.txt").symlink_to(outside / "existing.txt")
    (outside / "existing.txt").write_text("keep")
    for name in ("notes.txt", "live.txt"):
        response = await client.put(
            f"/api/chats/{CHAT}/files/{name}", content=b"payload", headers={"X-CSRF-Token": csrf}
        )
        assert response.status_code == 200
        stored = Path(response.json()["path"])
        assert stored.parent == workdir and stored.name != name
        assert stored.read_bytes() == b"payload" and not stored.is_symlink()
    assert not (outside / "planted.txt").exists()
    assert (outside / "existing.txt").read_text() == "keep"


async def test_an_oversized_upload_is_cut_and_leaves_no_file(web, workdir: Path) -> None:
    adapter, token, client = web
    csrf = await login(client, token)
    limit = int(adapter.settings.max_upload_mb * MIB)

    async def body() -> AsyncIterator[bytes]:
        for _ in range(limit // (64 * 1024) + 8):
            yield b"x" * 64 * 1024

    response = await client.put(
        f"/api/chats/{CHAT}/files/big.bin", content=body(), headers={"X-CSRF-Token": csrf}
    )
    assert response.status_code == 413
    assert not list(workdir.glob("big*"))


async def test_bad_ids_are_400s_not_crashes(web) -> None:
    _adapter, token, client = web
    await login(client, token)
    for header in ("²", "-1", "1e3", "9" * 40):
        response = await client.get(
            f"/api/chats/{CHAT}/events", headers={"Last-Event-ID": header.encode("latin-1")}
        )
        assert response.status_code == 400, header
        assert "Last-Event-ID" in response.json()["error"]
    csrf = (await client.get("/api/me")).json()["csrf"]
    huge = await client.post(f"/api/board/{2**64}/approve", headers={"X-CSRF-Token": csrf})
    assert huge.status_code == 400, huge.text
    assert "task_id" in huge.json()["error"]


async def test_no_redirect_is_built_from_the_host_header(web) -> None:
    _adapter, token, client = web
    await login(client, token)
    for path in ("/api/chats/", "/api/me/", "/static/app.js/"):
        response = await client.get(path, headers={"Host": "evil.example"})
        assert "evil.example" not in response.headers.get("location", ""), path
        assert response.status_code not in (301, 302, 307, 308), path
    assert json.loads((await client.get("/api/chats")).text)["chats"] == []
