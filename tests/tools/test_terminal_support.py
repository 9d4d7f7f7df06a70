"""Shared helpers for the terminal and process tool tests (no tests here).

Each test gets a real home (config.yaml, .env with a fake secret), a real
`LocalEnvironment` over a tmp work directory and a real `ToolRegistry`, so
argument coercion and error sanitising run as the engine sees them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herald.config import Settings
from herald.environments import Environment, LocalEnvironment
from herald.safety import ApprovalPrompt
from herald.testing.homes import make_home
from herald.tools import process, terminal
from herald.tools.registry import ERROR_PREFIX, ToolContext, ToolRegistry, ToolResult

SECRET_NAME = "HERALD_TEST_SERVICE_SECRET"
SECRET_VALUE = "zq-echoed-secret-4e1d9b"
# Harmless when it runs (prints 42) yet flagged for approval (inline interpreter code).
NEEDS_APPROVAL = "python3 -c 'print(6*7)'"
# Leaves a file behind when it runs, so a test can prove it did not.
NEEDS_APPROVAL_TRACE = 'python3 -c \'open("ran.txt", "w").write("x")\''


@dataclass
class FakeHuman:
    """Answers approval prompts from a script and records what it was shown."""

    answers: list[str | None]
    prompts: list[ApprovalPrompt] = field(default_factory=list)

    def __call__(self, prompt: ApprovalPrompt) -> str | None:
        self.prompts.append(prompt)
        return self.answers.pop(0) if self.answers else None


@dataclass
class Harness:
    settings: Settings
    ctx: ToolContext
    registry: ToolRegistry
    work: Path

    def call(self, name: str, **args: Any) -> ToolResult:
        return self.registry.dispatch(name, json.dumps(args), self.ctx)

    def ok(self, name: str, **args: Any) -> str:
        result = self.call(name, **args)
        assert not result.is_error, result.content
        return result.content

    def error(self, name: str, **args: Any) -> str:
        result = self.call(name, **args)
        assert result.is_error and result.content.startswith(ERROR_PREFIX), result.content
        return result.content

    def json(self, name: str, **args: Any) -> Any:
        return json.loads(self.ok(name, **args))

    def close(self) -> None:
        if self.ctx.environment is not None:
            self.ctx.environment.close()


def make_harness(
    tmp_path: Path,
    config: dict[str, Any] | None = None,
    *,
    approve: Callable[[ApprovalPrompt], str | None] | None = None,
    surface: str = "cli",
    environment: Environment | None = None,
    with_environment: bool = True,
) -> Harness:
    # config=None keeps an existing config.yaml (a later session of the same home).
    settings = make_home(tmp_path / "home", config, {SECRET_NAME: SECRET_VALUE})
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    if environment is None and with_environment:
        environment = LocalEnvironment(str(work), secrets=settings.secrets)
    ctx = ToolContext(
        session_id="test-session",
        home=settings.home,
        config=settings.config,
        secrets=settings.secrets,
        environment=environment,
        surface=surface,
        approve=approve,
    )
    registry = ToolRegistry()
    terminal.register(registry)
    process.register(registry)
    return Harness(settings, ctx, registry, work)
