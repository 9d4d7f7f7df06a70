"""Random hostile requests for the served surfaces (web chat, HTTP API), shared by the
fuzz test and `bench/fuzz_served.py`: random bytes and random JSON at every route,
odd path segments, ids and headers. A generator of request specs from a seeded
`random.Random`, so a failure is reproducible from its seed and index.

What a run checks is the server's side: no 5xx, no traceback in its log."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

WEIRD_STRINGS = [
    "", " ", "²", "٣", "-1", "0", "1e3", "9" * 40, str(2**63), str(2**64), "NaN", "null",
    "../../etc/passwd", "..%2f..%2f", "%00", "\u0000", "\ud7ff", "a" * 300, "<script>",
    "chat-0123456789", "*", "?", "#", "%", "\u202e", "\ufeff", "true", "[]", "{}",
]  # fmt: skip
WEB_PATHS = [
    "/", "/login", "/logout", "/static/{s}", "/api/me", "/api/chats", "/api/chats/{s}",
    "/api/chats/{s}/messages", "/api/chats/{s}/events", "/api/chats/{s}/files/{s}",
    "/api/sessions/{s}", "/api/dashboard", "/api/memory", "/api/memory/{s}", "/api/skills",
    "/api/skills/{s}", "/api/board", "/api/board/{s}/approve", "/api/cron", "/api/cron/{s}/{s}",
    "/{s}", "/api/{s}", "/api/chats/",
]  # fmt: skip
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]


@dataclass
class HostileRequest:
    method: str
    path: str
    headers: dict[str, bytes] = field(default_factory=dict)
    body: bytes = b""
    params: dict[str, str] = field(default_factory=dict)


def random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 2**31, 2**63, 2**64, -(2**70), 10**30])
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e308, 1e-308])
    if kind in (4, 5):
        return rng.choice(WEIRD_STRINGS) if rng.random() < 0.5 else random_text(rng)
    if kind == 6:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["text", "token", "action", "content", "old_text", "messages", "role", "model",
            "stream", "user", "n", "tools", "stream_options", "include_usage"]  # fmt: skip
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


def random_text(rng: random.Random, size: int = 40) -> str:
    alphabet = "ab \n\t{}[]\"'\\<>&%`*_#:/.-0123456789²é中\u200b\u202e"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(size)))


def random_body(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.3:
        return rng.randbytes(rng.randrange(200))
    if roll < 0.8:
        return json.dumps(random_json(rng), ensure_ascii=rng.random() < 0.5).encode()
    if roll < 0.9:
        depth = rng.choice([10, 100, 2000])
        return b"[" * depth + b"]" * depth
    return b""


def _segment(rng: random.Random) -> str:
    text = rng.choice(WEIRD_STRINGS) if rng.random() < 0.7 else random_text(rng, 12)
    return "".join(c if c.isalnum() or c in "-_." else f"%{ord(c) & 0xFF:02X}" for c in text)


def _header_value(text: str) -> bytes:
    """`text` as raw UTF-8 header bytes, without what HTTP/1.1 cannot carry at all
    (control bytes; outer whitespace)."""
    return bytes(b for b in text.encode("utf-8") if b >= 0x20 and b != 0x7F).strip()


def web_request(rng: random.Random, csrf: str | None) -> HostileRequest:
    path = rng.choice(WEB_PATHS)
    while "{s}" in path:
        path = path.replace("{s}", _segment(rng), 1)
    method = rng.choice(METHODS)
    headers: dict[str, bytes] = {}
    if csrf and rng.random() < 0.8:
        headers["X-CSRF-Token"] = csrf.encode()
    if rng.random() < 0.3:
        headers["Last-Event-ID"] = _header_value(rng.choice(WEIRD_STRINGS))
    if rng.random() < 0.3:
        headers["Content-Type"] = rng.choice([b"application/json", b"text/plain", b"x/y", b""])
    params = {}
    if rng.random() < 0.3:
        params[rng.choice(["after", "limit", "days", "q"])] = rng.choice(WEIRD_STRINGS)
    body = random_body(rng) if method in ("POST", "PUT", "PATCH", "DELETE") else b""
    return HostileRequest(method, path, headers, body, params)


def api_request(rng: random.Random, operations: list[tuple[str, str]]) -> HostileRequest:
    """A request for one of the API's documented operations (from its OpenAPI schema),
    with random path parameters, headers and body."""
    method, template = rng.choice(operations)
    path = template
    while "{" in path:
        start, end = path.index("{"), path.index("}")
        path = path[:start] + _segment(rng) + path[end + 1 :]
    headers: dict[str, bytes] = {}
    if rng.random() < 0.3:
        headers["X-Herald-Session"] = _header_value(rng.choice(WEIRD_STRINGS))
    params = {}
    if rng.random() < 0.3:
        params[rng.choice(["limit", "source"])] = rng.choice(WEIRD_STRINGS)
    body = b""
    if method.upper() in ("POST", "PUT", "PATCH"):
        if rng.random() < 0.5:
            roles = ["user", "assistant", "system", "tool", "x", None]
            messages = [
                {"role": rng.choice(roles), "content": random_json(rng)}
                for _ in range(rng.randrange(1, 5))
            ]
            doc: Any = {"messages": messages, "stream": rng.random() < 0.2}
            if rng.random() < 0.3:
                doc[rng.choice(["user", "n", "tools", "model", "content"])] = random_json(rng)
            body = json.dumps(doc).encode()
        else:
            body = random_body(rng)
    return HostileRequest(method.upper(), path, headers, body, params)


async def send(client: Any, request: HostileRequest) -> tuple[int, str]:
    """Send `request` with an httpx.AsyncClient; returns the status and the start of the
    answer. An event stream is not read (it would never end): its status is the answer."""
    async with client.stream(
        request.method, request.path, headers=request.headers,
        content=request.body or None, params=request.params,
    ) as response:  # fmt: skip
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response.status_code, ""
        body = await response.aread()
        return response.status_code, body[:300].decode("utf-8", "replace")


def openapi_operations(schema: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (method, path)
        for path, item in schema.get("paths", {}).items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]


__all__ = [
    "HostileRequest",
    "api_request",
    "openapi_operations",
    "random_body",
    "random_json",
    "send",
    "web_request",
]
