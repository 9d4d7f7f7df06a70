"""The watchdog on a real runner with loopback platforms and a stepped clock: restarts
with backoff of the broken platform alone, the owner's once-only notices through the
home channel, and owed replies retried from the outbox."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from herald.gateway.contracts import EventSink, SendResult
from herald.gateway.health import Rhythm
from herald.gateway.testing import LoopbackAdapter, SendScript
from herald.gateway.watchdog import Watchdog

StartGateway = Callable[..., Awaitable[Any]]  # the start_gateway fixture (conftest.py)


class Clock:
    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now


class Flaky(LoopbackAdapter):
    """A long-poll platform whose reconnects fail `failing` times, then work."""

    def __init__(self, clock: Clock, failing: int = 0) -> None:
        super().__init__("flaky")
        self.failing = failing
        self.reconnects = 0
        self.health.clock = clock

    def expected_rhythm(self) -> Rhythm:
        return Rhythm.long_poll(25, 15)

    async def reconnect(self, sink: EventSink) -> None:
        self.reconnects += 1
        if self.failing:
            self.failing -= 1
            raise ConnectionError("cannot reach the platform")
        await super().reconnect(sink)


async def settle(watchdog: Watchdog) -> None:
    for _ in range(20):  # let the restart / notice tasks the check started run
        await asyncio.sleep(0)
    tasks = [r.task for r in watchdog._restarts.values() if r.task is not None]
    tasks += list(watchdog._notices)
    if watchdog._retrying is not None:
        tasks.append(watchdog._retrying)
    await asyncio.gather(*tasks, return_exceptions=True)


async def make(
    start_gateway: StartGateway, clock: Clock, failing: int = 0, **gateway: Any
) -> tuple[Any, LoopbackAdapter, Flaky, Watchdog]:
    config = {
        "home_channel": "loopback:owner-chat",
        "down_notice_after": 300,
        "watchdog": {"restart_backoff": 10, "restart_backoff_max": 80},
        **gateway,
    }
    runner, home = await start_gateway(config)
    home.health.clock = clock
    home.health.connected()  # its clocks start on the stepped clock
    flaky = Flaky(clock, failing)
    runner.adapters[flaky.name] = flaky
    await flaky.connect(runner)
    flaky.health.connected()
    flaky.health.received()
    return runner, home, flaky, Watchdog(runner, runner.config, clock=clock)


async def test_only_the_silent_platform_is_restarted_with_backoff(
    start_gateway: StartGateway,
) -> None:
    clock = Clock()
    _runner, home, flaky, watchdog = await make(start_gateway, clock, failing=2)
    home_reconnects = home.connected
    watchdog.check()  # all fine
    clock.now += 41  # past 25 + 15 s without a poll returning
    watchdog.check()
    await settle(watchdog)
    assert flaky.reconnects == 1 and home.connected == home_reconnects
    watchdog.check()  # within the backoff: no second attempt
    await settle(watchdog)
    assert flaky.reconnects == 1
    clock.now += 10  # the first attempt's wait
    watchdog.check()
    await settle(watchdog)
    assert flaky.reconnects == 2
    clock.now += 19  # the second attempt doubled it: 20 s
    watchdog.check()
    await settle(watchdog)
    assert flaky.reconnects == 2
    clock.now += 1
    watchdog.check()
    await settle(watchdog)
    assert flaky.reconnects == 3  # this one works
    health = flaky.health.assess()
    assert health.restarts_last_hour == 1
    assert (health.state, health.reason) == ("reconnecting", "restarted; waiting for traffic")
    clock.now += 41  # reconnected into another silence: down again (the wait was 40 s)
    watchdog.check()
    await settle(watchdog)
    assert flaky.reconnects == 4
    clock.now += 41  # silent again, but the wait has grown to 80 s (the maximum)
    watchdog.check()
    await settle(watchdog)
    assert flaky.reconnects == 4
    clock.now += 39
    watchdog.check()
    await settle(watchdog)
    assert flaky.reconnects == 5
    flaky.health.received()  # traffic: ok, and the backoff starts over
    watchdog.check()
    assert watchdog._restarts["flaky"].attempts == 0
    assert watchdog.transitions[0].before == "ok" and watchdog.transitions[0].after == "down"


async def test_the_owner_is_told_once_when_down_and_once_when_back(
    start_gateway: StartGateway,
) -> None:
    clock = Clock()
    _runner, home, flaky, watchdog = await make(
        start_gateway, clock, failing=100, watchdog={"enabled": False}
    )
    for _ in range(5):
        flaky.health.error("502 Bad Gateway")
    watchdog.check()
    clock.now += 299
    watchdog.check()
    await settle(watchdog)
    assert home.texts("owner-chat") == []  # not yet: down for less than 300 s
    clock.now += 2
    for _ in range(3):
        watchdog.check()
        await settle(watchdog)
    (notice,) = home.texts("owner-chat")
    assert "flaky" in notice and "down for 5 min" in notice
    flaky.health.received()
    for _ in range(3):
        watchdog.check()
        await settle(watchdog)
    assert len(home.texts("owner-chat")) == 2
    assert "back" in home.texts("owner-chat")[1]


async def test_no_notice_when_the_home_channel_is_the_broken_platform(
    start_gateway: StartGateway,
) -> None:
    clock = Clock()
    _runner, home, flaky, watchdog = await make(
        start_gateway, clock, home_channel="flaky:chat", watchdog={"enabled": False}
    )
    for _ in range(5):
        flaky.health.error("boom")
    watchdog.check()
    clock.now += 1000
    watchdog.check()
    await settle(watchdog)
    assert flaky.texts() == [] and home.texts() == []


async def test_an_owed_reply_waits_while_its_platform_is_down_then_goes_once(
    start_gateway: StartGateway,
) -> None:
    clock = Clock()
    runner, home, _flaky, watchdog = await make(start_gateway, clock)
    for _ in range(runner.config.send_retries + 1):  # the first delivery fails for good
        home.script.append(SendScript(result=SendResult(ok=False, error="503")))
    report = await runner.deliverer.deliver(
        home, target := _target("owner-chat"), "owed text", key="reply:owed"
    )
    assert not report.ok
    (owed,) = runner.outbox.undelivered()
    assert owed.state == "failed" and owed.text == "owed text"
    (shown,) = watchdog.report()["undelivered"]
    assert (shown["chat_id"], shown["preview"], shown["attempts"]) == ("owner-chat", "owed text", 1)
    clock.now += 41  # loopback is a served platform: silence is no fault; force it down
    for _ in range(5):
        home.health.error("503")
    await watchdog.retry_owed()
    assert home.texts() == []  # it comes back first
    home.health.received()
    watchdog.clock = lambda: owed.next_attempt_at + 1
    assert await watchdog.retry_owed() == 1
    assert home.texts("owner-chat") == ["owed text"]
    assert runner.outbox.undelivered() == []
    assert await watchdog.retry_owed() == 0
    assert target.chat_id == "owner-chat"


async def test_a_hijacked_model_cannot_move_the_home_channel(
    start_gateway: StartGateway, fake_llm: Any
) -> None:
    """The fake model plays an injected attacker in an attended chat: it tries to send the
    owner's outage notices to its own chat, by command and by file write. Both are refused
    and the config is unchanged."""
    from herald.testing.fake_llm import Reply

    runner, chat = await start_gateway({"home_channel": "loopback:owner-chat"})
    config_path = runner.settings.home.config_path
    before = config_path.read_text()
    attack = "herald config set gateway.home_channel telegram:666"
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": attack}),
        Reply.tool_call(
            "write_file",
            {"path": str(config_path), "content": "gateway:\n  home_channel: telegram:666\n"},
        ),
        Reply.text("done"),
    )
    result = await chat.inject("summarise this page")
    assert result.status == "replied"
    assert config_path.read_text() == before
    last = fake_llm.model_requests()[-1]
    results = [str(m.get("content")) for m in last.messages if m.get("role") == "tool"]
    assert len(results) == 2 and all("owner" in r or "refused" in r.lower() for r in results)
    assert runner.config.home_channel == "loopback:owner-chat"


def _target(chat: str) -> Any:
    from herald.gateway.delivery import Target

    return Target("loopback", chat)


async def test_errors_that_pile_up_between_two_passes_show_the_degraded_step(
    start_gateway: StartGateway,
) -> None:
    """Five failed sends between two passes take a platform from ok to down; the
    history says it was degraded on the way (by the first error), not that it fell."""
    clock = Clock()
    _runner, _home, flaky, watchdog = await make(start_gateway, clock)
    watchdog.check()  # ok
    for n in range(5):
        flaky.health.error(f"send failed #{n}")
    watchdog.check()
    moves = [(t.before, t.after, t.reason) for t in watchdog.transitions]
    assert moves[0] == ("ok", "degraded", "send failed #0")
    assert moves[1][:2] == ("degraded", "down") and "send failed #4" in moves[1][2]
    flaky.health.received()
    watchdog.check()
    for n in range(5):  # a second run of errors is told by its own first error
        flaky.health.error(f"again #{n}")
    watchdog.check()
    later = [(t.before, t.after, t.reason) for t in watchdog.transitions][-2:]
    assert later[0] == ("ok", "degraded", "again #0")


async def test_errors_that_pile_up_before_the_first_pass_show_the_degraded_step(
    start_gateway: StartGateway,
) -> None:
    """The watchdog's first pass can come after a platform already answered and then
    failed (a loaded machine, a slow connect): the history still shows degraded, by
    the first error, before down. (CI once saw `- → down` alone.)"""
    clock = Clock()
    _runner, _home, flaky, watchdog = await make(start_gateway, clock)
    flaky.health.received()
    for n in range(5):
        flaky.health.error(f"send failed #{n}")
    watchdog.check()
    moves = [(t.before, t.after, t.reason) for t in watchdog.transitions]
    assert moves[0] == ("-", "degraded", "send failed #0")
    assert moves[1][:2] == ("degraded", "down") and "send failed #4" in moves[1][2]


class SwallowsACancel(Flaky):
    """A reconnect whose handshake drops the first cancel (as Python 3.11's `wait_for`
    does when the reply it waits for lands in the same step), then waits an hour."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.reconnecting = asyncio.Event()
        self.ended = False

    async def reconnect(self, sink: EventSink) -> None:
        self.reconnecting.set()
        try:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass  # dropped, as wait_for drops it
            await asyncio.sleep(3600)
        finally:
            self.ended = True


async def test_a_stop_ends_a_restart_whose_handshake_drops_the_cancel(
    start_gateway: StartGateway,
) -> None:
    clock = Clock()
    runner, _home, flaky, watchdog = await make(start_gateway, clock)
    stuck = SwallowsACancel(clock)
    runner.adapters[flaky.name] = stuck
    stuck.health.connected()
    stuck.health.received()
    clock.now += 41  # silent past its rhythm: down, so the check restarts it
    watchdog.check()
    await asyncio.wait_for(stuck.reconnecting.wait(), 5)
    stopping = asyncio.ensure_future(watchdog.stop())
    # Not wait_for: its own cancel at the timeout would reach the restart through the
    # stop and end it, hiding a stop that waits. The old cancel-then-await waited an hour.
    done, _ = await asyncio.wait({stopping}, timeout=5)
    if not done:
        stopping.cancel()
    assert done and stuck.ended
