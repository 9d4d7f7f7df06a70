"""Helpers for the memory tests: real homes in tmp dirs, real tool dispatch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from herald.config import Settings
from herald.memory import MemoryManager
from herald.testing.homes import make_home
from herald.toolbox import default_registry
from herald.tools import ToolContext

registry = default_registry()  # the built-in tools, assembled by the composition root


def home_settings(tmp_path: Path, memory: dict[str, Any] | None = None) -> Settings:
    config = {"memory": memory} if memory else None
    return make_home(tmp_path / "home", config)


def tool_context(
    settings: Settings, *, store: Any = None, session_id: str | None = None
) -> ToolContext:
    return ToolContext(
        home=settings.home,
        config=settings.config,
        secrets=settings.secrets,
        store=store,
        session_id=session_id,
    )


def call(name: str, ctx: ToolContext, **arguments: Any) -> dict[str, Any]:
    """Dispatch a tool through the real registry and parse its JSON result."""
    result = registry.dispatch(name, json.dumps(arguments), ctx)
    assert not result.is_error, result.content
    return json.loads(result.content)


def call_raw(name: str, ctx: ToolContext, **arguments: Any) -> Any:
    return registry.dispatch(name, json.dumps(arguments), ctx)


def manager_for(settings: Settings, provider: Any = None) -> MemoryManager:
    return MemoryManager(settings.home, settings.config, settings.secrets, provider)
