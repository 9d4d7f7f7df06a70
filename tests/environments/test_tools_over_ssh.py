"""The terminal and process tools need no change to run over ssh."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from environment_support import SshdServer, ssh_environment

from herald.testing.homes import make_home
from herald.tools import process, terminal
from herald.tools.registry import ToolContext, ToolRegistry, ToolResult


@dataclass
class Session:
    ctx: ToolContext
    registry: ToolRegistry
    work: Path

    def call(self, name: str, **args: Any) -> ToolResult:
        return self.registry.dispatch(name, json.dumps(args), self.ctx)

    def ok(self, name: str, **args: Any) -> str:
        result = self.call(name, **args)
        assert not result.is_error, result.content
        return result.content


@pytest.fixture
def session(sshd: SshdServer, ssh_control_dir: str, tmp_path: Path) -> Iterator[Session]:
    work = tmp_path / "work"
    work.mkdir()
    settings = make_home(tmp_path / "home", {})
    env = ssh_environment(sshd, ssh_control_dir, cwd=str(work))
    # attended (a person who refuses anything asked): these tests are about ssh, and an
    # unattended turn runs only the unattended allowlist
    ctx = ToolContext(
        home=settings.home,
        config=settings.config,
        secrets=settings.secrets,
        environment=env,
        approve=lambda prompt: "deny",
    )
    registry = ToolRegistry()
    terminal.register(registry)
    process.register(registry)
    yield Session(ctx, registry, work)
    env.close()


def test_terminal_and_process_over_ssh(session: Session) -> None:
    (session.work / "sub").mkdir()
    out = session.ok("terminal", command="pwd", workdir="sub")
    assert re.fullmatch(rf"{session.work}/sub\n\[exit 0 · \d+\.\d s\]", out)
    out = session.ok("terminal", command="echo ready; read x; echo got $x", background=True)
    pid = re.search(r"(proc_\w+)", out).group(1)  # type: ignore[union-attr]
    session.ok("process", action="write", id=pid, input="it\n")
    waited = json.loads(session.ok("process", action="wait", id=pid, timeout=20))
    assert (waited["exit_code"], waited["output"]) == (0, "ready\ngot it\n")


def test_a_blocked_script_is_copied_to_the_remote_host(session: Session, sshd: SshdServer) -> None:
    command = "echo " + "b" * 5000  # too long to check: refused and saved
    result = session.call("terminal", command=command)
    assert result.is_error
    remote = re.search(r"saved as a script at (\S+) ", result.content).group(1)  # type: ignore[union-attr]
    # The test server's remote home is a tmp directory.
    assert remote.startswith(f"{sshd.remote_home}/.cache/herald/blocked-scripts/")
    assert session.ok("terminal", command=f"bash {remote}").startswith("b" * 100)
