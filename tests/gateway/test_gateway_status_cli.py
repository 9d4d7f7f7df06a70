"""`herald gateway status [--json]` reading what a running gateway wrote: per platform
state, reason, last receive/send, restarts and undelivered replies, and the recent
transitions. The "running gateway" is a real process whose pid is in the pid file."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

import herald.cli.gateway_cmd as gateway_cmd
from herald.state.run_files import GatewayStatus, RunFiles


@pytest.fixture
def live_pid() -> Iterator[int]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def write_status(  # type: ignore[no-untyped-def]
    settings, pid: int, health: list[dict], transitions: list[dict], undelivered=()
) -> None:
    files = RunFiles(settings.home)
    files.dir.mkdir(parents=True, exist_ok=True)
    files.pid_path.write_text(f"{pid}\n")
    now = time.time()
    files.write_status(
        GatewayStatus(
            running=True,
            pid=pid,
            state="running",
            started_at=now - 3600,
            platforms=[h["platform"] for h in health],
            health=health,
            transitions=transitions,
            undelivered=list(undelivered),
        )
    )


def platform(name: str, state: str, reason: str = "", **kw: object) -> dict:
    now = time.time()
    return {
        "platform": name,
        "state": state,
        "reason": reason,
        "since": now - 90,
        "last_receive": now - 3,
        "last_send": now - 400,
        "restarts_last_hour": 0,
        "undelivered": 0,
        **kw,
    }


def test_status_shows_each_platform_and_the_transitions(
    gateway_settings, live_pid: int, monkeypatch
) -> None:
    settings = gateway_settings()
    monkeypatch.setenv("HERALD_HOME", str(settings.home.root))
    write_status(
        settings,
        live_pid,
        [
            platform(
                "telegram", "down", "no traffic for 41 s", restarts_last_hour=3, undelivered=2
            ),
            platform("api", "ok"),
        ],
        [
            {
                "at": time.time() - 90,
                "platform": "telegram",
                "from": "ok",
                "to": "down",
                "reason": "no traffic for 41 s",
            }
        ],
        [
            {
                "platform": "telegram",
                "chat_id": "1001",
                "created_at": time.time() - 300,
                "attempts": 4,
                "last_error": "Bad Gateway",
                "preview": "Here is the summary you asked for…",
            }
        ],
    )
    # wide enough for every column whatever terminal the test run inherits
    result = CliRunner(env={"COLUMNS": "200"}).invoke(gateway_cmd.app, ["status"], obj={})
    assert result.exit_code == 3, result.output  # a platform is down
    lines = result.output.splitlines()
    assert lines[0].startswith(f"running (pid {live_pid})")
    telegram = next(line for line in lines if line.startswith("telegram"))
    assert telegram.split()[:8] == ["telegram", "down", "90", "s", "3", "s", "ago", "6"]
    assert "no traffic for 41 s" in telegram and " 3 " in telegram and " 2 " in telegram
    assert any(line.startswith("api") and " ok " in line for line in lines)
    assert any("telegram: ok → down (no traffic for 41 s)" in line for line in lines)
    assert any(
        line.strip()
        == "telegram:1001 5 min ago, 4 tries — Bad Gateway: Here is the summary you asked for…"
        for line in lines
    )


def test_status_json_is_the_whole_status(gateway_settings, live_pid: int, monkeypatch) -> None:
    settings = gateway_settings()
    monkeypatch.setenv("HERALD_HOME", str(settings.home.root))
    write_status(settings, live_pid, [platform("telegram", "ok")], [])
    result = CliRunner().invoke(gateway_cmd.app, ["status", "--json"], obj={})
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["running"] is True and data["pid"] == live_pid
    (health,) = data["health"]
    assert health["platform"] == "telegram" and health["state"] == "ok"


def test_status_json_of_a_stopped_gateway(gateway_settings, monkeypatch) -> None:
    settings = gateway_settings()
    monkeypatch.setenv("HERALD_HOME", str(settings.home.root))
    result = CliRunner().invoke(gateway_cmd.app, ["status", "--json"], obj={})
    assert result.exit_code == 1
    assert json.loads(result.output)["running"] is False
