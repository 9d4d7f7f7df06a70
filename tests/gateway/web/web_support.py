"""Helpers for the web chat tests: a logged-in httpx client and an SSE reader."""

from __future__ import annotations

import json
from typing import Any

import httpx

from herald.gateway.platforms.web.auth import COOKIE_NAME


async def login(client: httpx.AsyncClient, token: str, base: str = "") -> str:
    """Log in; returns the CSRF token."""
    response = await client.post(f"{base}/login", json={"token": token})
    assert response.status_code == 200, response.text
    assert COOKIE_NAME in client.cookies
    return response.json()["csrf"]


async def read_events(
    client: httpx.AsyncClient,
    url: str,
    *,
    until: str = "done",
    headers: dict[str, str] | None = None,
) -> list[tuple[int, str, dict[str, Any]]]:
    """Server-sent events from ``url`` up to and including the first ``until`` event."""
    events: list[tuple[int, str, dict[str, Any]]] = []
    current: dict[str, str] = {}
    async with client.stream("GET", url, headers=headers or {}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if not line:
                if "event" in current:
                    events.append(
                        (int(current["id"]), current["event"], json.loads(current["data"]))
                    )
                    if current["event"] == until:
                        return events
                current = {}
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(": ")
            current[field] = value
    return events
