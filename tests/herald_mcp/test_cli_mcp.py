"""`herald mcp list|test` and `herald chat -q` using an MCP tool, as real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from mcp_servers import toy_stdio, unfenced

from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "herald", *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=dict(os.environ),
    )


def configure(home, fake_llm, servers):
    make_home(home, merge(fake_model_config(fake_llm), {"mcp": {"servers": servers}}))


@pytest.mark.slow
def test_list_and_test(isolated_env, fake_llm, tmp_path):
    configure(
        isolated_env,
        fake_llm,
        {"toy": toy_stdio(), "broken": {"command": str(tmp_path / "missing"), "enabled": True}},
    )
    tested = run_cli("mcp", "test", "toy")
    assert tested.returncode == 0, tested.stderr
    assert "toy: ready (toy 1.0, stdio), approve: always" in tested.stdout
    assert "mcp_toy_add  [read-only]  Add two integers." in tested.stdout
    assert "mcp_toy_write_note  [may write]" in tested.stdout

    broken = run_cli("mcp", "test", "broken")
    assert broken.returncode == 1
    assert "did not start" in broken.stderr and "missing" in broken.stderr

    listed = run_cli("mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert "toy" in listed.stdout and "cached" in listed.stdout  # known from `mcp test`
    assert "mcp_toy_add" not in listed.stdout and "add" in listed.stdout

    unknown = run_cli("mcp", "test", "nope")
    assert unknown.returncode == 2 and "configured: broken, toy" in unknown.stderr


@pytest.mark.slow
def test_chat_uses_an_mcp_tool_and_reports_a_broken_server(isolated_env, fake_llm, tmp_path):
    configure(
        isolated_env,
        fake_llm,
        {
            "toy": toy_stdio(approve="never", start="session"),
            "broken": {"command": str(tmp_path / "missing"), "start": "session"},
        },
    )
    fake_llm.enqueue(Reply.tool_call("mcp_toy_add", {"a": 40, "b": 2}), Reply.text("Forty-two."))
    done = run_cli("chat", "-q", "what is 40+2?")
    assert done.returncode == 0, done.stderr
    assert "Forty-two." in done.stdout
    assert "MCP server broken is unavailable" in done.stderr
    second = fake_llm.model_requests()[1]
    assert [unfenced(m["content"]) for m in second.messages if m["role"] == "tool"] == ["42"]
