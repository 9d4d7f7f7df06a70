"""The per-adapter health recorder: states judged from traffic against the rhythm the
adapter declared (a stepped clock, no sleeping)."""

from __future__ import annotations

from herald.gateway.contracts import PlatformAdapter
from herald.gateway.health import HealthRecorder, Rhythm
from herald.gateway.testing import LoopbackAdapter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def recorder(rhythm: Rhythm, clock: Clock, **kw: int) -> HealthRecorder:
    return HealthRecorder("telegram", rhythm, clock=clock, **kw)


def test_a_long_poll_that_returns_in_rhythm_is_ok_and_silence_past_it_is_down() -> None:
    clock = Clock()
    health = recorder(Rhythm.long_poll(25, 15), clock)
    assert health.assess().state == "starting"
    clock.now += 25
    health.received()  # an empty poll returned: the link works
    assert health.assess().state == "ok"
    clock.now += 39
    assert health.assess().state == "ok"
    clock.now += 2  # 41 s of silence > 25 + 15
    verdict = health.assess()
    assert verdict.state == "down"
    assert "41 s" in verdict.reason and "poll" in verdict.reason
    health.received()
    assert health.assess().state == "ok"


def test_a_websocket_is_alive_while_heartbeats_are_acknowledged() -> None:
    clock = Clock()
    health = recorder(Rhythm.websocket(41.25, 10), clock)
    health.received()
    for _ in range(5):  # no events at all, but acks keep coming
        clock.now += 40
        health.heartbeat_ack()
    assert health.assess().state == "ok"
    clock.now += 52
    assert health.assess().state == "down"


def test_errors_degrade_then_down_and_a_receive_clears_them() -> None:
    clock = Clock()
    health = recorder(Rhythm.long_poll(25, 15), clock, down_after_errors=3)
    health.received()
    health.error("502 Bad Gateway")
    verdict = health.assess()
    assert (verdict.state, verdict.reason) == ("degraded", "502 Bad Gateway")
    health.error("502 Bad Gateway")
    health.error("502 Bad Gateway")
    assert health.assess().state == "down"
    assert health.assess().consecutive_errors == 3
    health.received()
    assert health.assess().state == "ok"


def test_reconnecting_shows_until_traffic_resumes_and_restarts_are_counted() -> None:
    clock = Clock()
    health = recorder(Rhythm.long_poll(25, 15), clock)
    health.received()
    health.reconnecting("connection reset by peer")
    verdict = health.assess()
    assert (verdict.state, verdict.reason, verdict.reconnects) == (
        "reconnecting",
        "connection reset by peer",
        1,
    )
    health.restarted()
    health.received()
    assert health.assess().state == "ok"
    assert health.assess().restarts_last_hour == 1
    clock.now += 3601
    health.received()
    assert health.assess().restarts_last_hour == 0


def test_an_outage_is_timed_from_its_start_and_names_the_last_error() -> None:
    clock = Clock()
    health = recorder(Rhythm.long_poll(25, 15), clock)
    health.received()
    clock.now += 41
    assert health.assess().since == clock.now
    started = clock.now
    health.error("getUpdates failed: Bad Gateway")
    clock.now += 1
    health.restarted()
    assert health.assess().state == "reconnecting"
    clock.now += 41
    verdict = health.assess()
    assert verdict.state == "down" and verdict.since == started  # one outage, not two
    clock.now += 1
    health.error("getUpdates failed: Bad Gateway")
    assert health.assess().reason.endswith("last error: getUpdates failed: Bad Gateway")
    health.received()
    assert health.assess().since == clock.now


def test_a_served_entrance_is_never_down_for_silence() -> None:
    clock = Clock()
    health = recorder(Rhythm.served(), clock)
    clock.now += 86_400
    assert health.assess().state == "ok"


def test_error_reasons_are_redacted_and_short() -> None:
    from herald.safety import clear_secret_values, register_secret_values

    register_secret_values(["sk-live-abcdefghijklmnop1234"])
    try:
        health = recorder(Rhythm.served(), Clock())
        health.error("refused sk-live-abcdefghijklmnop1234 " + "x" * 500)
        reason = health.assess().last_error or ""
        assert "sk-live-abcdefghijklmnop1234" not in reason
        assert len(reason) <= 200
    finally:
        clear_secret_values()


def test_every_adapter_has_a_recorder_with_its_declared_rhythm() -> None:
    adapter: PlatformAdapter = LoopbackAdapter()
    assert adapter.health is adapter.health
    assert adapter.health.platform == adapter.name
    assert adapter.health.rhythm == adapter.expected_rhythm()
