"""execute_code's channel (the script's own stdin/stdout) on every backend: the same
script, calling a real registry's read_file through the run, on local, ssh and bwrap.

The docker backend's test image (debian:bookworm-slim) has no python3; there the run
must say so, which is what its case checks where a Docker daemon answers."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from environment_support import require_bwrap

from herald.engine import Humans
from herald.environments import Environment
from herald.testing.fake_llm import Reply
from herald.tools import ToolContext, ToolRegistry, ToolResult
from herald.tools.execute_code.channel import Limits, ScriptRun
from herald.tools.file_tools import register as register_file_tools


class RegistryTools:
    """The NestedTools port over a plain registry (the engine's adds the turn's hooks and
    humans; the channel is what is under test here)."""

    def __init__(self, environment: Environment) -> None:
        self.registry = ToolRegistry()
        register_file_tools(self.registry)
        self.ctx = ToolContext(environment=environment)

    def names(self) -> tuple[str, ...]:
        return tuple(self.registry.names())

    def definition(self, name: str) -> dict[str, Any] | None:
        spec = self.registry.get(name)
        return spec.definition()["function"] if spec else None

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return self.registry.dispatch(name, arguments, self.ctx)


SCRIPT = (
    "import herald_tools, subprocess\n"
    "print(herald_tools.read_file('hello.txt').count('hello from the host'))\n"
    "subprocess.run(['echo', 'child'])\n"
    "print('done')\n"
)


def test_a_script_calls_tools_on_every_backend(backend: Environment, workdir: Path) -> None:
    (workdir / "hello.txt").write_text("hello from the host\n")
    run = ScriptRun(
        backend,
        RegistryTools(backend),
        ["read_file"],
        Limits(timeout_seconds=60, max_output_chars=10_000, max_tool_calls=5),
        threading.Event(),
    )
    outcome = run.run(SCRIPT, backend.cwd)
    if backend.name == "docker":
        assert outcome.stopped == "crashed" and outcome.exit_code == 127
        pytest.skip("the docker test image has no python3 (the run said so)")
    assert (outcome.output, outcome.error, outcome.stopped) == ("1\nchild\ndone\n", None, None)
    assert outcome.tool_calls == 1


def test_in_the_sandbox_a_script_runs_unasked_and_sees_only_the_sandbox(
    make_agent, fake_llm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """approvals.sandboxed: relaxed applies to the script as to any command: it runs
    without a prompt because what it can reach is the sandbox (the host's keys are not
    there) and the checkpointed workdir."""
    require_bwrap()
    home = tmp_path / "user-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("zq-host-key-4417\n")
    monkeypatch.setenv("HOME", str(home))
    script = (
        "import os\n"
        "print(os.path.exists(os.path.expanduser('~/.ssh/id_rsa')))\n"
        "open('made-by-script.txt', 'w').write('x')\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    asked: list[str] = []
    agent = make_agent(
        config={"terminal": {"backend": "bwrap"}, "toolsets": {"enabled": ["execute_code"]}}
    )
    humans = Humans(approve=lambda prompt: asked.append(prompt.command) or "deny")
    agent.start_turn("go", humans=humans).result(timeout=60)
    out = [m["content"] for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool"][-1]
    assert asked == [] and out.startswith("False")
    assert (tmp_path / "work" / "made-by-script.txt").read_text() == "x"
