"""Files out, on every platform of the contract: the fake model calls `send_file` and the
platform's fake server records the upload (name and bytes), through the real gateway and
the platform's real client library. The model playing an attacker is refused Herald's
own files, and a group chat needs the owner's press."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from harness import PlatformHarness, StartGateway

from herald.testing.fake_llm import FakeLLMServer

REPORT = b"date,value\n2026-12-01,42\n" + bytes(range(256))  # binary too: bytes, not text


def tool_results(fake_llm: FakeLLMServer) -> list[str]:
    last = fake_llm.model_requests()[-1]
    return [str(m.get("content")) for m in last.messages if m.get("role") == "tool"]


async def test_a_file_the_model_sends_arrives_in_the_chat(
    harness: PlatformHarness, gateway: StartGateway, tmp_path: Path
) -> None:
    running = await gateway()
    (Path(running.settings.config.gateway.cwd) / "report.csv").write_bytes(REPORT)
    harness.say(harness.owner, "please SENDFILE report.csv")
    seen = await harness.wait_for_file("report.csv")
    assert seen.data == REPORT
    assert "your file" in seen.caption
    await harness.wait_for(lambda s: s.text == "File step done.", "the answer")
    assert len(harness.files()) == 1  # sent once
    with sqlite3.connect(running.settings.home.state_db) as db:  # and in the ledger
        rows = db.execute(
            "SELECT platform, status, message_id FROM gateway_deliveries"
            " WHERE delivery_key LIKE 'file:%'"
        ).fetchall()
    assert [(platform, status) for platform, status, _id in rows] == [(harness.name, "sent")]
    assert rows[0][2]  # the platform's id of the upload


@pytest.mark.slow
async def test_a_refused_upload_is_told_to_the_model_and_left_failed_in_the_ledger(
    harness: PlatformHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    running = await gateway()
    (Path(running.settings.config.gateway.cwd) / "report.csv").write_bytes(REPORT)
    harness.fail_uploads(1)
    harness.say(harness.owner, "please SENDFILE report.csv")
    await harness.wait_for(lambda s: s.text == "File step done.", "the answer")
    assert harness.files() == []
    (result,) = tool_results(fake_llm)
    assert "report.csv was not sent" in result
    with sqlite3.connect(running.settings.home.state_db) as db:
        rows = db.execute(
            "SELECT status FROM gateway_deliveries WHERE delivery_key LIKE 'file:%'"
        ).fetchall()
    assert rows == [("failed",)]


@pytest.mark.slow
@pytest.mark.parametrize("secret", [".env", "config.yaml"])
async def test_herald_own_files_are_never_sent(
    harness: PlatformHarness, gateway: StartGateway, fake_llm: FakeLLMServer, secret: str
) -> None:
    running = await gateway()
    target = running.settings.home.root / secret
    assert target.exists()
    harness.say(harness.owner, f"now SENDFILE {target}")
    await harness.wait_for(lambda s: s.text == "File step done.", "the answer")
    assert harness.files() == []
    (result,) = tool_results(fake_llm)
    assert "Refused" in result and secret in result


@pytest.mark.slow
async def test_a_group_chat_needs_the_owners_press(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    harness.require("groups")
    running = await gateway()
    (Path(running.settings.config.gateway.cwd) / "report.csv").write_bytes(REPORT)
    harness.say(harness.owner, "share SENDFILE report.csv", where="group")
    prompt = await harness.wait_for(lambda s: bool(s.buttons), "approval prompt", where="group")
    assert "group chat" in prompt.text and "report.csv" in prompt.text
    assert harness.files(where="group") == []  # nothing before the press

    harness.press(harness.member, prompt, "/approve", where="group")  # not an approver
    await harness.wait_for(lambda s: "⛔" in s.text, "refusal", where="group")
    assert harness.files(where="group") == []

    harness.press(harness.owner, prompt, "/approve", where="group")
    seen = await harness.wait_for_file("report.csv", where="group")
    assert seen.data == REPORT
