"""Fixtures shared by the whole suite: an isolated environment, the fake LLM server,
and agents wired to it in a temporary home."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herald.testing.fake_llm import FakeLLMServer

_SECRETISH = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No test sees the host's API keys or Herald home."""
    for name in list(os.environ):
        if name.startswith(("HERALD_", "OPENAI", "ANTHROPIC", "OPENROUTER")) or _SECRETISH.search(
            name
        ):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "herald-home"
    monkeypatch.setenv("HERALD_HOME", str(home))
    # Two test workers share the cores: llama.cpp's spinning threads, one of them
    # preempted by the other worker, made each local-model turn 2-4x slower.
    monkeypatch.setenv("HERALD_LOCAL_THREADS", "1")
    return home


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def make_agent(tmp_path: Path, fake_llm: FakeLLMServer):
    """Build an Agent on a fresh home pointed at the fake server. Every call returns a
    new Agent on the same home (so a second call with session_id= resumes)."""
    from herald.engine import Agent, AgentOptions
    from herald.state import StateStore
    from herald.testing.homes import fake_model_config, make_home, merge
    from herald.toolbox import builtin_tools

    opened: list[Any] = []

    def make(
        *,
        api: str = "openai",
        config: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        session_id: str | None = None,
        callbacks: Any = None,
        registry: Any = None,
        **options: Any,
    ) -> Agent:
        settings = make_home(
            tmp_path / "home", merge(fake_model_config(fake_llm, api), config or {}), env
        )
        store = StateStore(settings.home.state_db)
        opened.append(store)
        if "cwd" not in options:  # tools act in a scratch directory, never in the repo
            workdir = tmp_path / "work"
            workdir.mkdir(exist_ok=True)
            options["cwd"] = str(workdir)
        agent = Agent.open(
            settings,
            store,
            session_id=session_id,
            source=options.pop("source", "cli"),
            options=AgentOptions(**options),
            callbacks=callbacks,
            tools=registry if registry is not None else builtin_tools(),
        )
        opened.append(agent)
        return agent

    yield make
    for item in reversed(opened):
        item.close()
