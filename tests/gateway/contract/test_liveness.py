"""Liveness per platform: the fake server in fault modes, the real gateway watching.

A link that stays open but silent, a server cutting the connection every second, a
5xx storm: the watchdog restarts that adapter within its limits, the status file
shows the transitions, and every message is answered exactly once."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from harness import Gateway, PlatformHarness, StartGateway

pytestmark = pytest.mark.slow

FAST_WATCHDOG = {
    "check_every": 0.2,
    "slack_seconds": 1.0,  # a 1 s long poll must return within 2 s
    "restart_backoff": 0.2,
    "restart_backoff_max": 1.0,
    "down_after_errors": 3,
    "delivery_backoff": 0.2,
    "delivery_backoff_max": 1.0,
}


def fast(harness: PlatformHarness, **gateway: Any) -> dict[str, Any]:
    return {
        "watchdog": FAST_WATCHDOG,
        "platforms": {harness.name: harness.liveness_config()},
        **gateway,
    }


def status_file(running: Gateway) -> dict[str, Any]:
    path = running.settings.home.root / "gateway" / "status.json"
    return json.loads(path.read_text(encoding="utf-8"))


def platform_status(running: Gateway, name: str) -> dict[str, Any]:
    # The status file lists platforms from the watchdog's first pass on, which may come
    # after a platform already answered (Discord's connect waits for its guilds).
    found = (h for h in status_file(running).get("health", []) if h["platform"] == name)
    return next(
        found, {"platform": name, "state": "unknown", "reason": "", "restarts_last_hour": 0}
    )


async def until(predicate: Any, what: str, timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def ask(harness: PlatformHarness, word: str) -> None:
    harness.say(harness.owner, f"please {word}")
    await harness.wait_for(lambda s: s.text == f"echo {word}", f"the answer to {word}", timeout=60)


def answered_once(harness: PlatformHarness, words: list[str]) -> None:
    texts = [s.text for s in harness.sent()]
    assert {w: texts.count(f"echo {w}") for w in words} == dict.fromkeys(words, 1)


async def test_a_silent_link_is_restarted_and_nothing_is_lost(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    harness.require("fault_modes")
    running = await gateway(fast(harness))
    await ask(harness, "WORD-before")
    harness.silence(True)
    await until(lambda: platform_status(running, harness.name)["state"] == "down", "down")
    down = platform_status(running, harness.name)
    assert "no traffic" in down["reason"]
    harness.say(harness.owner, "please WORD-during")  # sent while the link is silent
    await until(
        lambda: platform_status(running, harness.name)["restarts_last_hour"] >= 1,
        "a restart by the watchdog",
    )
    harness.silence(False)
    await harness.wait_for(lambda s: s.text == "echo WORD-during", "the answer", timeout=60)
    await until(lambda: platform_status(running, harness.name)["state"] == "ok", "recovery")
    await ask(harness, "WORD-after")
    answered_once(harness, ["WORD-before", "WORD-during", "WORD-after"])
    moves = [(t["from"], t["to"]) for t in status_file(running)["transitions"]]
    assert ("ok", "down") in moves and moves[-1][1] == "ok"


async def test_a_server_cutting_the_connection_every_second_loses_nothing(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    harness.require("fault_modes")
    await gateway(fast(harness))
    harness.drop_connections_every(1.0)
    words = [f"WORD-cut{i}" for i in range(6)]
    try:
        for word in words:
            await ask(harness, word)
    finally:
        harness.drop_connections_every(None)
    answered_once(harness, words)


async def test_a_5xx_storm_degrades_then_downs_and_everything_is_answered_once(
    harness: PlatformHarness, gateway: StartGateway
) -> None:
    harness.require("fault_modes")
    running = await gateway(fast(harness))
    await ask(harness, "WORD-calm")
    harness.storm(True)
    try:
        harness.say(harness.owner, "please WORD-storm")
        await until(lambda: platform_status(running, harness.name)["state"] == "down", "down")
        reason = platform_status(running, harness.name)["reason"]
        # Discord's storm is 503s: discord.py retries 500/502/504 by itself first.
        assert any(mark in reason for mark in harness.storm_marks), reason
    finally:
        harness.storm(False)
    await harness.wait_for(lambda s: s.text == "echo WORD-storm", "the answer", timeout=60)
    await until(lambda: platform_status(running, harness.name)["state"] == "ok", "recovery")
    answered_once(harness, ["WORD-calm", "WORD-storm"])
    moves = [(t["from"], t["to"]) for t in status_file(running)["transitions"]]
    assert any(after == "degraded" for _, after in moves)
    assert any(after == "down" for _, after in moves)
