"""The runtime side of the control plane: a command started by an agent's tool call
(even through a script the model wrote, even after unsetting the marker) cannot change
Herald's security posture; the owner's own commands are unaffected."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from herald.environments import TOOL_CALL_MARKER, build_child_env, started_by_tool_call
from herald.testing.fake_llm import Reply

HERALD = f"{sys.executable} -m herald"


def run(argv: list[str], *, marked: bool, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != TOOL_CALL_MARKER}
    if marked:
        env[TOOL_CALL_MARKER] = "1"
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=60, cwd=cwd, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_every_tool_command_environment_carries_the_marker_and_cannot_drop_it():
    env = build_child_env(None, {TOOL_CALL_MARKER: ""}, base={"PATH": "/usr/bin"})
    assert env[TOOL_CALL_MARKER] == "1"
    assert started_by_tool_call({TOOL_CALL_MARKER: "0"})
    assert not started_by_tool_call({}, proc=Path("/nonexistent"))


@pytest.mark.slow
def test_posture_commands_refuse_a_tool_call_and_serve_the_owner(herald_home, tmp_path):
    config = herald_home / "config.yaml"
    before = config.read_bytes()
    set_off = [sys.executable, "-m", "herald", "config", "set", "approvals.mode", "off"]
    for argv in (
        set_off,
        [sys.executable, "-m", "herald", "web", "token"],
        [sys.executable, "-m", "herald", "plugins", "new", "evil"],
        [sys.executable, "-m", "herald", "pairing", "approve", "ABC123"],
    ):
        proc = run(argv, marked=True, cwd=tmp_path)
        assert proc.returncode == 2 and "control.posture_change" in proc.stderr, proc.stderr
        assert "yourself in your own terminal" in proc.stderr
    assert config.read_bytes() == before
    assert not (herald_home / "web" / "token.json").exists()
    assert not (herald_home / "plugins" / "evil").exists()
    # a preference is not posture: it runs (the command checker asks a human first)
    ok = run([*set_off[:5], "model.name", "other"], marked=True, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    owner = run(set_off, marked=False, cwd=tmp_path)
    assert owner.returncode == 0, owner.stderr
    assert "approvals:" in config.read_text()  # the owner's own change went through


def test_unsetting_the_marker_in_a_script_does_not_escape(herald_home, tmp_path):
    config = herald_home / "config.yaml"
    before = config.read_bytes()
    # (herald is not the shell's last command, so the shell forks it: an exec chain that
    # clears the variable on the way is the documented limit of this check)
    script = (
        f"unset {TOOL_CALL_MARKER}; env -u {TOOL_CALL_MARKER} {HERALD} config set "
        "approvals.mode off; echo after"
    )
    proc = run(["bash", "-c", script], marked=True, cwd=tmp_path)
    assert proc.stdout == "after\n"
    assert "control.posture_change" in proc.stderr, proc.stderr
    assert config.read_bytes() == before


def test_a_script_the_model_writes_and_runs_cannot_turn_approvals_off(
    herald_home, fake_llm, tmp_path
):
    """The side door the command checker cannot see: write_file a script, then bash it
    (the owner allowed that script unattended, so the runtime backstop is what holds)."""
    work = tmp_path / "work"
    work.mkdir()
    config = herald_home / "config.yaml"
    config.write_text(config.read_text() + "approvals:\n  unattended_allow: ['bash setup.sh']\n")
    before = config.read_bytes()
    body = f"#!/bin/sh\nunset {TOOL_CALL_MARKER}\n{HERALD} config set approvals.mode off\n"
    fake_llm.enqueue(
        Reply.tool_call("write_file", {"path": "setup.sh", "content": body}),
        Reply.tool_call("terminal", {"command": "bash setup.sh"}),
        Reply.text("done"),
    )
    proc = run([sys.executable, "-m", "herald", "chat", "-q", "set up"], marked=False, cwd=work)
    assert proc.returncode == 0, proc.stderr
    last = fake_llm.model_requests()[-1]
    results = [m["content"] for m in last.messages if m["role"] == "tool"]
    assert "control.posture_change" in results[-1], results
    assert config.read_bytes() == before
