"""Random hostile requests at every operation of the API's OpenAPI schema (issue 30): no
answer is a 5xx and nothing is logged as a crash. The big run is bench/fuzz_served.py."""

from __future__ import annotations

import logging
import random
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_api_runner_e2e import AUTH
from test_api_runner_e2e import gateway as api_runner

from herald.gateway.platforms.api.adapter import ApiAdapter
from herald.gateway.runner import GatewayRunner
from herald.testing.hostile_requests import api_request, openapi_operations, send

gateway = api_runner
REQUESTS = 300


async def test_random_requests_get_no_5xx_and_log_no_crash(
    gateway: tuple[GatewayRunner, ApiAdapter], caplog: pytest.LogCaptureFixture
) -> None:
    _, adapter = gateway
    root = adapter.base_url.removesuffix("/v1")
    rng = random.Random(30)
    caplog.set_level(logging.WARNING)
    statuses: list[int] = []
    async with httpx.AsyncClient(base_url=root, headers=AUTH, timeout=60) as http:
        operations = openapi_operations((await http.get("/openapi.json")).json())
        assert ("post", "/v1/chat/completions") in operations
        for index in range(REQUESTS):
            request = api_request(rng, operations)
            status, text = await send(http, request)
            assert status < 500, (index, request, text)
            statuses.append(status)
    crashes = [r for r in caplog.records if r.exc_info or "Exception in ASGI" in r.getMessage()]
    assert crashes == []
    assert {200, 400, 404} <= set(statuses), sorted(set(statuses))
