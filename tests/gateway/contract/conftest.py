"""The contract suite runs once per platform in `HARNESSES`.

Add a platform by writing ``<name>_harness.py`` (a `PlatformHarness`) and listing it
here with the client library it needs (skipped where that library is missing).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import Gateway, PlatformHarness, StartGateway, contract_settings

from herald.safety import clear_secret_values
from herald.testing.fake_llm import FakeLLMServer

# platform name -> (harness module, class, client library the adapter needs)
HARNESSES: dict[str, tuple[str, str, str]] = {
    "telegram": ("telegram_harness", "TelegramHarness", "telegram"),
    "signal": ("signal_harness", "SignalHarness", "httpx"),
    "discord": ("discord_harness", "DiscordHarness", "discord"),
    "slack": ("slack_harness", "SlackHarness", "slack_bolt"),
    "whatsapp": ("whatsapp_harness", "WhatsAppHarness", "httpx"),
    "email": ("email_harness", "EmailHarness", "aioimaplib"),
    "matrix": ("matrix_harness", "MatrixHarness", "mautrix"),
}


@pytest.fixture(params=sorted(HARNESSES))
def harness(request: pytest.FixtureRequest) -> Iterator[PlatformHarness]:
    module_name, class_name, library = HARNESSES[request.param]
    pytest.importorskip(library)
    made: PlatformHarness = getattr(importlib.import_module(module_name), class_name)()
    made.start()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture
async def gateway(
    harness: PlatformHarness, fake_llm: FakeLLMServer, tmp_path: Path
) -> AsyncIterator[StartGateway]:
    """Start the real gateway (lifecycle `serve`, real runner) on `harness`'s platform;
    later calls start another process on the same home (a restart)."""
    started: list[Gateway] = []
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)

    async def start(
        gateway: dict[str, Any] | None = None, extra: dict[str, Any] | None = None
    ) -> Gateway:
        settings = contract_settings(harness, tmp_path / "home", fake_llm, workdir, gateway, extra)
        running = await Gateway(settings).start()
        started.append(running)
        return running

    yield start
    for running in started:
        if running.task is not None and not running.task.done():
            await running.stop()
    clear_secret_values()
