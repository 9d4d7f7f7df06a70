"""Random hostile requests at every web chat route, logged in and not (issue 30): no
answer is a 5xx and nothing is logged as a crash. The big run is bench/fuzz_served.py."""

from __future__ import annotations

import logging
import random

import httpx
import pytest
from test_web_hostile import web
from web_support import login

from herald.testing.hostile_requests import send, web_request

__all__ = ["web"]
REQUESTS = 300


async def test_random_requests_get_no_5xx_and_log_no_crash(
    web, caplog: pytest.LogCaptureFixture
) -> None:
    adapter, token, client = web
    csrf = await login(client, token)  # first: the strangers' guesses will trip the throttle
    rng = random.Random(30)
    caplog.set_level(logging.WARNING)
    statuses: list[int] = []
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{adapter.port}", timeout=30
    ) as stranger:
        for index in range(REQUESTS):
            who, token_for = (stranger, None) if index % 2 else (client, csrf)
            request = web_request(rng, token_for)
            status, text = await send(who, request)
            assert status < 500, (index, request, text)
            statuses.append(status)
    crashes = [r for r in caplog.records if r.exc_info or "Exception in ASGI" in r.getMessage()]
    assert crashes == []
    # the requests got past the guards to many different answers, not one wall
    assert {200, 400, 401, 404} <= set(statuses), sorted(set(statuses))
