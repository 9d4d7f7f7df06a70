"""Exactly once with real processes: two `herald cron tick` at the same time run an
occurrence once; a tick killed with SIGKILL mid-run leaves a lock that expires, and
the occurrence is recorded `failed` (crashed) by the next tick — not lost, not rerun."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from cron_support import herald_cmd, herald_env, utc

from herald.cron.jobs import JobSpec, add_job
from herald.cron.scheduler import Scheduler
from herald.cron.store import CronStore
from herald.testing.fake_llm import Reply
from herald.toolbox import builtin_tools

AT = "2026-12-01T10:00:30+00:00"


def wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


@pytest.mark.slow
def test_two_concurrent_ticks_run_the_occurrence_once(cron_settings, fake_llm, tmp_path) -> None:
    settings = cron_settings()
    with CronStore.for_home(settings.home) as store:
        add_job(settings, store, "once", JobSpec(schedule="@hourly", prompt="count me"),
                now=utc(2026, 12, 1, 9, 30))  # fmt: skip
    fake_llm.default_reply = Reply.text("counted", delay=1.0)
    env = herald_env(settings.home.root)
    ticks = [
        subprocess.Popen(
            herald_cmd("cron", "tick", "--at", AT),
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outputs = [t.communicate(timeout=60) for t in ticks]
    assert [t.returncode for t in ticks] == [0, 0], outputs
    with CronStore.for_home(settings.home) as store:
        runs = store.runs("once")
        assert [(r.status, r.scheduled_for) for r in runs] == [
            ("ok", utc(2026, 12, 1, 10).timestamp())
        ]
        assert store.lock_of(runs[0].job_id) is None
        assert store.job("once").next_run == utc(2026, 12, 1, 11).timestamp()
    assert len(fake_llm.model_requests()) == 1
    assert sum("nothing was due" in out for out, _err in outputs) == 1


@pytest.mark.slow
def test_a_run_killed_with_sigkill_is_recorded_failed_after_its_lock_expires(
    cron_settings, fake_llm, herald
) -> None:
    settings = cron_settings()
    with CronStore.for_home(settings.home) as store:
        job = add_job(settings, store, "victim", JobSpec(schedule="@hourly", prompt="slow work"),
                      now=utc(2026, 12, 1, 9, 30))  # fmt: skip
    fake_llm.default_reply = Reply.text("too late", delay=30.0)
    tick = subprocess.Popen(
        herald_cmd("cron", "tick", "--at", AT), env=herald_env(settings.home.root),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    with CronStore.for_home(settings.home) as store:
        wait_for(lambda: store.lock_of(job.id) is not None and fake_llm.model_requests())
        os.kill(tick.pid, signal.SIGKILL)
        tick.wait(10)
        assert store.runs("victim") == []  # nothing recorded while it ran
        assert store.job("victim").next_run == utc(2026, 12, 1, 10).timestamp()
    fake_llm.default_reply = Reply.text("fine")
    done = herald("cron", "tick", "--at", AT)
    assert "victim" in done.stdout and "failed" in done.stdout
    with CronStore.for_home(settings.home) as store:
        (run,) = store.runs("victim")
        assert run.status == "failed" and run.reason == "crashed"
        assert f"pid {tick.pid}" in (run.error or "")
        assert store.lock_of(job.id) is None
        assert store.job("victim").next_run == utc(2026, 12, 1, 11).timestamp()
    assert herald("cron", "tick", "--at", AT).stdout.strip() == "nothing was due"


def test_a_lock_past_its_ttl_is_a_crashed_run_even_when_its_process_lives(cron_settings) -> None:
    settings = cron_settings()
    with CronStore.for_home(settings.home) as store:
        job = add_job(settings, store, "hung", JobSpec(schedule="@hourly", prompt="x"),
                      now=utc(2026, 12, 1, 9, 30))  # fmt: skip
        occurrence = utc(2026, 12, 1, 10).timestamp()
        assert store.take_lock(job, "scheduled", occurrence, holder="other:1:x", ttl=0.0)
        assert not store.take_lock(job, "scheduled", occurrence, holder="me", ttl=60)
        report = Scheduler(settings, store, tools=builtin_tools()).tick(utc(2026, 12, 1, 10, 0, 30))
        assert [(r.status, r.reason) for r in report.records] == [("failed", "crashed")]
        assert store.lock_of(job.id) is None


@pytest.mark.slow
def test_stopping_the_daemon_mid_run_interrupts_and_records_the_run(
    cron_settings, fake_llm
) -> None:
    from datetime import UTC, datetime, timedelta

    settings = cron_settings()
    with CronStore.for_home(settings.home) as store:
        job = add_job(settings, store, "long", JobSpec(schedule="every 1h", prompt="long work"),
                      now=datetime.now(UTC) - timedelta(hours=1, seconds=-5))  # fmt: skip
    fake_llm.default_reply = Reply.text("never seen", delay=60.0)
    daemon = subprocess.Popen(
        herald_cmd("cron", "daemon", "--interval", "0.5"), env=herald_env(settings.home.root),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with CronStore.for_home(settings.home) as store:
            wait_for(lambda: store.lock_of(job.id) is not None and fake_llm.model_requests())
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    with CronStore.for_home(settings.home) as store:
        (run,) = store.runs("long")
        assert run.status == "failed" and run.reason.startswith("interrupted")
        assert store.lock_of(job.id) is None and store.schedulers() == []
