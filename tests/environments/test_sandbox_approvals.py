"""The terminal tool's approval gate on the bwrap backend: relaxed runs
sandbox-private damage without a prompt (and it really happens, inside) but
asks for the project itself when no checkpoint covers it, strict asks as on
the host, and a rw mount outside the workdir still asks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from environment_support import require_bwrap

from herald.environments import BwrapEnvironment, Mount, SandboxSpec
from herald.safety import ApprovalPrompt
from herald.testing.homes import make_home
from herald.tools import terminal
from herald.tools.registry import ToolContext, ToolRegistry


class Human:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list[ApprovalPrompt] = []

    def __call__(self, prompt: ApprovalPrompt) -> str:
        self.prompts.append(prompt)
        return self.answer


def _session(tmp_path: Path, approvals: dict[str, Any], human: Human, mounts=()):  # type: ignore[no-untyped-def]
    require_bwrap()
    work = tmp_path / "work"
    (work / "build").mkdir(parents=True)
    (work / "build" / "out.o").write_text("x")
    settings = make_home(tmp_path / "home", {"approvals": approvals})
    env = BwrapEnvironment(SandboxSpec(str(work), mounts=tuple(mounts), max_processes=64))
    ctx = ToolContext(
        home=settings.home,
        config=settings.config,
        secrets=settings.secrets,
        environment=env,
        approve=human,
        surface="cli",
    )
    registry = ToolRegistry()
    terminal.register(registry)
    return registry, ctx, work


def _run(registry: ToolRegistry, ctx: ToolContext, command: str):  # type: ignore[no-untyped-def]
    return registry.dispatch("terminal", json.dumps({"command": command}), ctx)


def test_relaxed_runs_sandbox_private_damage_without_a_prompt(tmp_path: Path) -> None:
    human = Human("deny")
    registry, ctx, _ = _session(tmp_path, {}, human)
    try:
        result = _run(
            registry, ctx, "mkdir -p /tmp/scratch/a && rm -rf /tmp/scratch && echo cleaned"
        )
        assert not result.is_error and "cleaned" in result.content
        assert human.prompts == []
        refused = _run(registry, ctx, "rm -rf /")
        assert refused.is_error and "blocked whatever the configuration" in refused.content
    finally:
        ctx.environment.close()  # type: ignore[union-attr]


def test_relaxed_still_asks_for_the_project_without_a_checkpoint(tmp_path: Path) -> None:
    # The working directory is the owner's real project (issue 27): this test
    # used to expect `rm -rf build` there to run unasked.
    human = Human("deny")
    registry, ctx, work = _session(tmp_path, {}, human)
    try:
        result = _run(registry, ctx, "rm -rf build")
        assert result.is_error and len(human.prompts) == 1
        assert (work / "build" / "out.o").exists()
    finally:
        ctx.environment.close()  # type: ignore[union-attr]


def test_strict_keeps_the_prompt(tmp_path: Path) -> None:
    human = Human("deny")
    registry, ctx, work = _session(tmp_path, {"sandboxed": "strict"}, human)
    try:
        result = _run(registry, ctx, "rm -rf build")
        assert result.is_error and len(human.prompts) == 1
        assert (work / "build" / "out.o").exists()
    finally:
        ctx.environment.close()  # type: ignore[union-attr]


@pytest.mark.parametrize("answer", ["deny", "once"])
def test_a_rw_mount_outside_the_workdir_still_asks(tmp_path: Path, answer: str) -> None:
    data = tmp_path / "data"
    (data / "old").mkdir(parents=True)
    human = Human(answer)
    registry, ctx, _ = _session(tmp_path, {}, human, mounts=[Mount(str(data), "rw")])
    try:
        result = _run(registry, ctx, f"rm -rf {data}/old")
        assert len(human.prompts) == 1 and human.prompts[0].rule == "dangerous.recursive_delete"
        assert result.is_error == (answer == "deny")
        assert (data / "old").exists() == (answer == "deny")
    finally:
        ctx.environment.close()  # type: ignore[union-attr]
