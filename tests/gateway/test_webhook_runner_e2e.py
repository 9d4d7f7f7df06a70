"""The webhook adapter end to end through the real `GatewayRunner`: routed to the
webhook profile, run with the narrow `herald-webhook` toolset, and delivered to a
push platform when `deliver_to` is set."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from herald.config import Settings
from herald.gateway.lifecycle import load_adapters
from herald.gateway.platforms.webhook.adapter import WebhookAdapter
from herald.gateway.platforms.webhook.signing import sign
from herald.gateway.runner import GatewayRunner
from herald.gateway.testing import LoopbackAdapter
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.strong_secrets import WEBHOOK_SECRET
from herald.toolbox import default_registry
from herald.tools import resolve_toolset

registry = default_registry()

SECRET = WEBHOOK_SECRET
Started = tuple[GatewayRunner, WebhookAdapter, LoopbackAdapter, dict[str, Settings]]


@pytest.fixture
async def start(
    gateway_settings: Callable[..., Settings], tmp_path: Path
) -> AsyncIterator[Callable[..., Any]]:
    started: list[Started] = []

    async def run(**webhook: Any) -> Started:
        hook = {
            "enabled": True,
            "port": 0,
            "secret": "${HERALD_WEBHOOK_SECRET}",
            "profile": "hooks",
            **webhook,
        }
        env = {"HERALD_WEBHOOK_SECRET": SECRET}
        main = gateway_settings({"platforms": {"webhook": hook}}, env=env)
        hooks = gateway_settings(root=tmp_path / "hooks-home", profile="hooks")
        profiles = {"default": main, "hooks": hooks}
        adapters, problems = load_adapters(main)
        assert problems == []
        (adapter,) = adapters
        assert isinstance(adapter, WebhookAdapter)
        loopback = LoopbackAdapter()
        runner = GatewayRunner(profiles, [loopback, adapter])
        await loopback.connect(runner)
        await adapter.connect(runner)
        started.append((runner, adapter, loopback, profiles))
        return started[-1]

    yield run
    for runner, adapter, _, _ in started:
        await runner.shutdown(0, grace=5)
        await adapter.disconnect()


async def post(adapter: WebhookAdapter, payload: Any, *, secret: str = SECRET) -> httpx.Response:
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "X-Herald-Signature": sign(secret, body)}
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.post(
            f"http://127.0.0.1:{adapter.port}/webhook/ci", content=body, headers=headers
        )


async def test_signed_delivery_runs_in_the_webhook_profile_with_the_narrow_toolset(
    start: Callable[..., Any], fake_llm: FakeLLMServer
) -> None:
    runner, adapter, _, profiles = await start()
    fake_llm.enqueue(Reply.text("CI run 812 failed in the lint step."))
    response = await post(adapter, {"text": "CI run 812 finished: failure", "run": 812})
    assert response.status_code == 200, response.text
    assert response.json()["reply"] == "CI run 812 failed in the lint step."
    (request,) = fake_llm.model_requests()
    offered = {tool["function"]["name"] for tool in request.tools or []}
    narrow = set(resolve_toolset(["herald-webhook"], registry))
    assert offered and offered <= narrow
    assert not offered & {"terminal", "write_file", "patch"}
    with StateStore(profiles["hooks"].home.state_db) as store:
        (session,) = store.list_sessions(source="webhook")
        assert session.profile == "hooks"
    assert runner.store_for("default").list_sessions(source="webhook") == []


async def test_bad_signature_never_reaches_the_runner(
    start: Callable[..., Any], fake_llm: FakeLLMServer
) -> None:
    _, adapter, _, _ = await start()
    response = await post(adapter, {"text": "hello"}, secret="wrong-secret")
    assert response.status_code == 401
    assert fake_llm.model_requests() == []


async def test_deliver_to_a_push_platform(
    start: Callable[..., Any], fake_llm: FakeLLMServer
) -> None:
    _, adapter, loopback, _ = await start(deliver_to="loopback:ops-room")
    fake_llm.enqueue(Reply.text("Deploy of v2.3 finished cleanly."))
    response = await post(adapter, {"text": "deploy v2.3 done"})
    assert response.status_code == 202, response.text
    delivery = response.json()["delivery_id"]
    await loopback.wait_for(lambda a: bool(a.texts("ops-room")), timeout=20)
    assert loopback.texts("ops-room") == ["Deploy of v2.3 finished cleanly."]
    for _ in range(200):  # the ledger records the send just after it lands
        if adapter.deliveries[delivery] != "pending":
            break
        await asyncio.sleep(0.02)
    assert adapter.deliveries[delivery] == "delivered"
