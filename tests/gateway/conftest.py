"""Gateway fixtures: a home wired to the fake LLM server, and a real `GatewayRunner`
serving the in-process loopback platform."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from herald.config import Settings
from herald.gateway.runner import GatewayRunner
from herald.gateway.testing import LoopbackAdapter
from herald.safety import clear_secret_values
from herald.testing.homes import fake_model_config, make_home, merge

StartGateway = Callable[..., Awaitable[tuple[GatewayRunner, LoopbackAdapter]]]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def gateway_settings(tmp_path: Path, fake_llm: Any, workdir: Path) -> Callable[..., Settings]:
    """Settings for a home whose model is the fake server; `loopback` user-1 is allowed."""

    def make(
        gateway: dict[str, Any] | None = None,
        *,
        extra: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        root: Path | None = None,
        profile: str | None = None,
    ) -> Settings:
        base = {
            "gateway": {
                "cwd": str(workdir),
                "allowed_users": {"loopback": ["user-1"]},
                "status_edit_interval": 0.0,
                "send_retries": 1,
            }
        }
        config = merge(merge(fake_model_config(fake_llm), base), {"gateway": gateway or {}})
        return make_home(
            root or tmp_path / "home", merge(config, extra or {}), env, profile=profile
        )

    return make


@pytest.fixture
async def start_gateway(gateway_settings: Callable[..., Settings]) -> AsyncIterator[StartGateway]:
    runners: list[GatewayRunner] = []

    async def start(
        gateway: dict[str, Any] | None = None,
        *,
        adapter: LoopbackAdapter | None = None,
        extra: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        settings: dict[str, Settings] | None = None,
        **adapter_options: Any,
    ) -> tuple[GatewayRunner, LoopbackAdapter]:
        profiles = settings or {"default": gateway_settings(gateway, extra=extra, env=env)}
        adapter = adapter or LoopbackAdapter(**adapter_options)
        runner = GatewayRunner(profiles, [adapter])
        await adapter.connect(runner)
        runners.append(runner)
        return runner, adapter

    yield start
    for runner in runners:
        await runner.shutdown(0, grace=5)
    clear_secret_values()
