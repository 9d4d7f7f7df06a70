"""The process: graceful drain, auto-resume after a restart, the restart-loop guard,
and the pid/status files behind `herald gateway status|stop` (with a real SIGTERM)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from gateway_support import eventually

from herald.gateway.lifecycle import RunFiles, gateway_status, serve, stop_gateway
from herald.gateway.restart_guard import RestartGuard, guard_path
from herald.gateway.resume import RESUME_TEXT
from herald.gateway.runner import GatewayRunner
from herald.gateway.testing import LoopbackAdapter
from herald.state import StateStore
from herald.state.gateway_tables import GatewayState
from herald.testing.fake_llm import Reply

# ---- the restart-loop guard ---------------------------------------------------------------


class Clock:
    def __init__(self, now: float = 10_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_three_resuming_boots_in_the_window_skip_the_next_resume(tmp_path: Path) -> None:
    clock = Clock()
    guard = RestartGuard(tmp_path / "guard.json", window=600, max_boots=3, clock=clock)
    for _ in range(3):
        assert guard.check_and_record()
        clock.now += 60
    assert not guard.check_and_record()
    assert len(guard.recent_boots()) == 3  # a skipped boot is not recorded
    clock.now += 600  # the window moved on
    assert guard.check_and_record()


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"resume_boots": "x"}', "\x00\xff"])
def test_a_corrupt_guard_file_never_blocks(tmp_path: Path, content: str) -> None:
    path = tmp_path / "guard.json"
    path.write_text(content, encoding="utf-8", errors="surrogateescape")
    guard = RestartGuard(path, window=600, max_boots=3)
    assert guard.check_and_record()
    assert len(json.loads(path.read_text())["resume_boots"]) == 1


# ---- serving, draining, resuming ----------------------------------------------------------


async def _boot(
    settings, chat: LoopbackAdapter
) -> tuple[GatewayRunner, asyncio.Event, asyncio.Task[int]]:
    runner = GatewayRunner({"default": settings})
    stop = asyncio.Event()
    task = asyncio.ensure_future(serve(runner, [chat], home=settings.home, stop=stop))
    await eventually(lambda: chat.connected and chat.sink is runner)
    return runner, stop, task


async def test_drain_lets_a_running_turn_finish(gateway_settings, fake_llm) -> None:
    settings = gateway_settings({"drain_seconds": 10})
    chat = LoopbackAdapter()
    runner, stop, served = await _boot(settings, chat)
    await eventually(
        lambda: json.loads(RunFiles(settings.home).status_path.read_text())["state"] == "running"
    )
    fake_llm.enqueue(Reply.text("finished in time", delay=0.8))
    turn = chat.inject_soon("work")
    await asyncio.sleep(0.3)
    stop.set()
    await eventually(lambda: not runner.accepting)
    refused = await chat.inject("one more thing")
    assert refused.status == "error" and "restarting" in refused.text
    assert await asyncio.wait_for(served, 15) == 0
    assert (await turn).text == "finished in time"
    assert "finished in time" in chat.texts()
    assert not chat.connected
    with StateStore(settings.home.state_db) as store:
        assert GatewayState(store).inflight_turns() == []  # it finished: nothing to resume
    status = json.loads((settings.home.root / "gateway" / "status.json").read_text())
    assert status["state"] == "stopped"


async def _cut_a_long_job(settings, fake_llm) -> Any:
    """Boot on a chat, start a turn running `sleep 30`, and stop: the drain (set short
    in `settings`) cuts it. The cut turn's result and how long the stop took."""
    chat = LoopbackAdapter()
    _runner, stop, served = await _boot(settings, chat)
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 30"}))
    turn = chat.inject_soon("long job")
    await chat.wait_for_text("running terminal")
    started = time.monotonic()
    stop.set()
    assert await asyncio.wait_for(served, 15) == 0
    return await turn, time.monotonic() - started


async def test_a_turn_cut_by_the_drain_is_resumed_on_the_next_boot(
    gateway_settings, fake_llm
) -> None:
    settings = gateway_settings({"drain_seconds": 0.3})
    cut, stopping = await _cut_a_long_job(settings, fake_llm)
    assert stopping < 8
    assert cut.exit_reason == "interrupted_by_user" and "restarting" in cut.text
    # the next boot resumes it
    fake_llm.enqueue(Reply.text("picked it up again"))
    chat2 = LoopbackAdapter()
    runner2, stop2, served2 = await _boot(settings, chat2)
    await chat2.wait_for_text("picked it up again")
    assert "continuing where it stopped" in chat2.texts()[0] and "long job" in chat2.texts()[0]
    request = fake_llm.model_requests()[-1]
    assert request.last_user_text == RESUME_TEXT
    calls = [m for m in request.messages if m.get("tool_calls")]
    results = [m for m in request.messages if m.get("role") == "tool"]
    assert len(calls) == 1 and len(results) == 1  # the cut tool call has its result
    await eventually(lambda: runner2.state.inflight_turns() == [])
    stop2.set()
    assert await asyncio.wait_for(served2, 15) == 0
    assert len(json.loads(guard_path(settings.home.root).read_text())["resume_boots"]) == 1


async def test_the_guard_skips_resuming_after_a_restart_loop(gateway_settings, fake_llm) -> None:
    settings = gateway_settings({"drain_seconds": 0.2})
    chat = LoopbackAdapter()
    _runner, stop, served = await _boot(settings, chat)
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 30"}))
    chat.inject_soon("crashy job")
    await chat.wait_for_text("running terminal")
    stop.set()
    await asyncio.wait_for(served, 15)
    now = time.time()
    path = guard_path(settings.home.root)
    path.write_text(json.dumps({"resume_boots": [now - 30, now - 20, now - 10]}))
    requests_before = len(fake_llm.model_requests())
    chat2 = LoopbackAdapter()
    runner2, stop2, served2 = await _boot(settings, chat2)
    await chat2.wait_for_text("did not continue")
    assert "restarted several times" in chat2.texts()[0]
    assert runner2.state.inflight_turns() == []
    # the gateway still serves new messages
    assert (await chat2.inject("are you there?")).status == "replied"
    assert len(fake_llm.model_requests()) == requests_before + 1
    stop2.set()
    await asyncio.wait_for(served2, 15)


async def test_a_corrupt_guard_file_does_not_block_startup_or_resume(
    gateway_settings, fake_llm
) -> None:
    settings = gateway_settings({"drain_seconds": 0.2})
    chat = LoopbackAdapter()
    _runner, stop, served = await _boot(settings, chat)
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 30"}))
    chat.inject_soon("job")
    await chat.wait_for_text("running terminal")
    stop.set()
    await asyncio.wait_for(served, 15)
    guard_path(settings.home.root).write_text("{{{ not json")
    fake_llm.enqueue(Reply.text("resumed anyway"))
    chat2 = LoopbackAdapter()
    _runner2, stop2, served2 = await _boot(settings, chat2)
    await chat2.wait_for_text("resumed anyway")
    stop2.set()
    await asyncio.wait_for(served2, 15)


# ---- the real process ---------------------------------------------------------------------


def test_run_status_and_stop_with_a_real_sigterm(gateway_settings, tmp_path: Path) -> None:
    settings = gateway_settings()
    env = {**os.environ, "HERALD_HOME": str(settings.home.root)}
    code = (
        "from herald.config import load_settings\n"
        "from herald.gateway.lifecycle import run_gateway\n"
        "raise SystemExit(run_gateway(load_settings()))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 20
        while gateway_status(settings.home).state != "running":
            assert proc.poll() is None, "the gateway exited early"
            assert time.monotonic() < deadline, "the gateway did not start"
            time.sleep(0.05)
        status = gateway_status(settings.home)
        assert status.running and status.pid == proc.pid and status.platforms == []
        # a second gateway on the same home refuses to start
        second = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, timeout=30)
        assert second.returncode == 1
        stopped, message = stop_gateway(settings.home, timeout=20)
        assert stopped, message
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    files = RunFiles(settings.home)
    assert not files.pid_path.exists()
    after = gateway_status(settings.home)
    assert not after.running and after.state == "stopped" and after.detail == ""
    log_text = (settings.home.logs_dir / "gateway.log").read_text()
    assert "gateway starting" in log_text and "gateway stopped" in log_text
    assert stop_gateway(settings.home, timeout=1) == (False, "the gateway is not running")


def test_the_gateway_cli_reports_a_stopped_gateway(gateway_settings, monkeypatch) -> None:
    from typer.testing import CliRunner

    import herald.cli.gateway_cmd as gateway_cmd

    settings = gateway_settings()
    monkeypatch.setenv("HERALD_HOME", str(settings.home.root))
    cli = CliRunner()
    status = cli.invoke(gateway_cmd.app, ["status"], obj={})
    assert status.exit_code == 1 and "stopped" in status.output
    stop = cli.invoke(gateway_cmd.app, ["stop"], obj={})
    assert stop.exit_code == 1 and "not running" in stop.output


def test_a_platform_that_cannot_start_is_reported(gateway_settings) -> None:
    from herald.gateway.lifecycle import load_adapters

    settings = gateway_settings()
    settings.config.gateway.platforms.api.enabled = True  # needs an api_key: a clear problem
    adapters, problems = load_adapters(settings)
    assert adapters == []
    assert problems and problems[0].startswith("api:")


async def test_the_gateway_runs_the_cron_jobs_of_every_profile_it_serves(
    gateway_settings, fake_llm, tmp_path
) -> None:
    from datetime import UTC, datetime, timedelta

    from herald.cron import CronStore
    from herald.cron.jobs import JobSpec, add_job

    cron = {"cron": {"tick_seconds": 0.2}}
    own = gateway_settings(extra=cron)
    work = gateway_settings(
        extra={**cron, "cron": {"tick_seconds": 0.2}},
        root=tmp_path / "home" / "profiles" / "work",
        profile="work",
    )
    off = gateway_settings(
        extra={"cron": {"enabled": False}},
        root=tmp_path / "home" / "profiles" / "quiet",
        profile="quiet",
    )
    an_hour_ago = datetime.now(UTC) - timedelta(hours=1, minutes=5)
    for settings, prompt in ((own, "default job"), (work, "work job"), (off, "quiet job")):
        with CronStore.for_home(settings.home) as store:
            add_job(
                settings,
                store,
                "brief",
                JobSpec(schedule="@hourly", prompt=prompt),
                now=an_hour_ago,
            )
    fake_llm.default_reply = Reply.text("briefed")
    runner = GatewayRunner({"default": own, "work": work, "quiet": off})
    chat = LoopbackAdapter()
    stop = asyncio.Event()
    served = asyncio.ensure_future(serve(runner, [chat], home=own.home, stop=stop))

    def ran(settings) -> bool:
        with CronStore.for_home(settings.home) as store:
            return any(r.status == "ok" for r in store.runs("brief"))

    await eventually(lambda: ran(own) and ran(work), timeout=30)
    stop.set()
    assert await asyncio.wait_for(served, 30) == 0
    prompts = " ".join(r.last_user_text for r in fake_llm.model_requests())
    assert "default job" in prompts and "work job" in prompts
    assert "quiet job" not in prompts  # cron.enabled: false in that profile


class SlowToConnect(LoopbackAdapter):
    """A platform whose connect waits until `opened` is set (a Discord READY that takes
    its time, a server that answers the handshake and then nothing); records whether
    that connect was cancelled and whether it was closed after."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.opened = asyncio.Event()
        self.cancelled = False
        self.disconnects = 0

    async def connect(self, sink) -> None:
        try:
            await self.opened.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        await super().connect(sink)

    async def disconnect(self) -> None:
        self.disconnects += 1
        await super().disconnect()


async def test_platforms_connect_side_by_side(gateway_settings) -> None:
    """A slow platform does not hold the others back: each connects on its own (five
    platforms are not five handshakes one after another)."""
    settings = gateway_settings()
    slow, quick = SlowToConnect("slow"), LoopbackAdapter("quick")
    stop = asyncio.Event()
    runner = GatewayRunner({"default": settings})
    served = asyncio.ensure_future(serve(runner, [slow, quick], home=settings.home, stop=stop))
    await eventually(lambda: quick.connected)  # while `slow` still waits
    assert not slow.connected
    slow.opened.set()
    await eventually(lambda: slow.connected)
    await eventually(
        lambda: json.loads(RunFiles(settings.home).status_path.read_text())["state"] == "running"
    )
    assert json.loads(RunFiles(settings.home).status_path.read_text())["platforms"] == [
        "slow",
        "quick",
    ]
    stop.set()
    assert await asyncio.wait_for(served, 15) == 0
    assert not slow.connected and not quick.connected


async def test_a_stop_while_a_platform_connects_ends_at_once(gateway_settings) -> None:
    """`herald gateway stop` (or SIGTERM) during start-up does not wait for a platform
    that is still connecting (Discord's READY can take up to its 30 s timeout): that
    connect is cancelled, every platform is closed, and the gateway says it stopped."""
    settings = gateway_settings()
    slow, quick = SlowToConnect("slow"), LoopbackAdapter("quick")
    stop = asyncio.Event()
    runner = GatewayRunner({"default": settings})
    served = asyncio.ensure_future(serve(runner, [slow, quick], home=settings.home, stop=stop))
    await eventually(lambda: quick.connected)
    stop.set()
    assert await asyncio.wait_for(served, 5) == 0
    assert slow.cancelled and slow.disconnects == 1  # a half-open link is closed too
    assert not quick.connected
    status = json.loads(RunFiles(settings.home).status_path.read_text())
    assert status["state"] == "stopped" and not status["running"]


async def test_a_stop_during_start_up_drains_the_turns_already_running(
    gateway_settings, fake_llm
) -> None:
    """One platform serves while another still connects; a stop then lets the turn it
    began finish and be answered before the runner closes (nothing cut mid-write)."""
    settings = gateway_settings({"drain_seconds": 10})
    slow, quick = SlowToConnect("slow"), LoopbackAdapter("quick")
    settings.config.gateway.allowed_users["quick"] = ["user-1"]
    stop = asyncio.Event()
    runner = GatewayRunner({"default": settings})
    served = asyncio.ensure_future(serve(runner, [slow, quick], home=settings.home, stop=stop))
    await eventually(lambda: quick.connected)
    fake_llm.enqueue(Reply.text("answered while starting", delay=0.8))
    turn = quick.inject_soon("work")
    await eventually(lambda: fake_llm.model_requests())
    stop.set()
    assert await asyncio.wait_for(served, 15) == 0
    assert (await asyncio.wait_for(turn, 15)).text == "answered while starting"
    assert "answered while starting" in quick.texts()
    assert slow.cancelled
    with StateStore(settings.home.state_db) as store:
        assert GatewayState(store).inflight_turns() == []


async def test_a_message_sent_while_the_gateway_starts_is_not_taken_for_the_cut_turn(
    gateway_settings, fake_llm
) -> None:
    """Turns cut by the last stop are resumed once every platform has connected; a
    person who writes again before that (their platform connected first) is answered,
    and their new turn is neither announced as a restart nor continued a second time."""
    settings = gateway_settings({"drain_seconds": 0.3})
    await _cut_a_long_job(settings, fake_llm)
    # The next boot: the chat connects at once, another platform takes its time.
    slow, chat2 = SlowToConnect("slow"), LoopbackAdapter()
    runner2 = GatewayRunner({"default": settings})
    stop2 = asyncio.Event()
    served2 = asyncio.ensure_future(serve(runner2, [slow, chat2], home=settings.home, stop=stop2))
    await eventually(lambda: chat2.connected)
    fake_llm.enqueue(Reply.text("here is the new answer", delay=1.0))
    asked = len(fake_llm.model_requests())
    new = chat2.inject_soon("never mind, something else")
    await eventually(lambda: len(fake_llm.model_requests()) > asked)
    slow.opened.set()  # every platform is up: the lifecycle resumes what it must
    assert (await asyncio.wait_for(new, 15)).text == "here is the new answer"
    await asyncio.sleep(0.5)  # a continuation, had one been queued, would have begun
    texts = chat2.texts()
    assert not any("continuing where it stopped" in t for t in texts), texts
    assert [r.last_user_text for r in fake_llm.model_requests()[asked:]] == [
        "never mind, something else"
    ]
    await eventually(lambda: runner2.state.inflight_turns() == [])
    stop2.set()
    assert await asyncio.wait_for(served2, 15) == 0
