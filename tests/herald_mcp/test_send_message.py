"""`send_message` from an MCP client goes out through the running gateway: queued in the
outbox its courier sends through the delivery ledger; refused clearly otherwise."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from herald.cron import CronStore
from herald.mcp.server.reading import HeraldReader
from herald.state import StateStore
from herald.state.run_files import GatewayStatus, RunFiles
from herald.testing.homes import make_home
from herald.tools import ToolArgumentError


@pytest.fixture
def reader(tmp_path: Path):
    settings = make_home(tmp_path / "home", {})
    store = StateStore(settings.home.root / "state.db")
    yield HeraldReader(settings, store), settings
    store.close()


def test_without_a_gateway_nothing_is_queued(reader) -> None:
    herald, settings = reader
    with pytest.raises(ToolArgumentError, match="no Herald gateway is running"):
        herald.send_message("telegram", "42", "hi")
    with CronStore.for_home(settings.home) as outbox:
        assert outbox.outbox() == []


def test_a_running_gateway_gets_the_message_in_its_outbox(reader) -> None:
    herald, settings = reader
    gateway = subprocess.Popen(["sleep", "30"])  # stands in for the gateway's process
    try:
        files = RunFiles(settings.home)
        files.dir.mkdir(parents=True, exist_ok=True)
        files.pid_path.write_text(str(gateway.pid))
        files.write_status(GatewayStatus(running=True, state="running", platforms=["telegram"]))
        with pytest.raises(ToolArgumentError, match="does not serve 'slack'"):
            herald.send_message("slack", "42", "hi")
        answer = json.loads(herald.send_message("telegram", "42", "The build is green."))
    finally:
        gateway.kill()
        gateway.wait()
    assert answer["queued"] and answer["target"] == "telegram:42"
    assert f"pid {gateway.pid}" in answer["note"]
    with CronStore.for_home(settings.home) as outbox:
        (item,) = outbox.outbox(status="queued")
    assert (item.target, item.text) == ("telegram:42", "The build is green.")
