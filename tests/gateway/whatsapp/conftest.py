"""WhatsApp beyond the contract: the real gateway (lifecycle, runner, ledgers) with the
adapter against the fake Cloud API, as in the contract suite, whose harness and
gateway starter are reused from ``tests/gateway/contract``."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "contract"))

from harness import Gateway, StartGateway, contract_settings
from whatsapp_harness import WhatsAppHarness

from herald.safety import clear_secret_values
from herald.testing.fake_llm import FakeLLMServer


@pytest.fixture
def wa() -> Iterator[WhatsAppHarness]:
    made = WhatsAppHarness()
    made.start()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture
async def whatsapp_gateway(
    wa: WhatsAppHarness, fake_llm: FakeLLMServer, tmp_path: Path
) -> AsyncIterator[StartGateway]:
    """Start the gateway on the WhatsApp harness; `platform` overrides settings of
    ``gateway.platforms.whatsapp``, `extra` merges into the whole config."""
    started: list[Gateway] = []
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)

    async def start(
        gateway: dict[str, Any] | None = None,
        *,
        platform: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Gateway:
        section = {**wa.platform_config(), **(platform or {})}
        merged = {**(gateway or {}), "platforms": {"whatsapp": section}}
        settings = contract_settings(wa, tmp_path / "home", fake_llm, workdir, merged, extra)
        running = await Gateway(settings).start()
        started.append(running)
        return running

    yield start
    for running in started:
        if running.task is not None and not running.task.done():
            await running.stop()
    clear_secret_values()
