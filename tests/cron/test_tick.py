"""The tick on a controllable clock, against the fake model server: due / not due across
zones and DST changes, catch-up after downtime, pausing, budgets, one record per
occurrence and `next_run` moving only with a record."""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest
from cron_support import utc

from herald.cron.jobs import JobSpec, add_job, set_enabled
from herald.cron.scheduler import Scheduler
from herald.testing.fake_llm import Reply
from herald.toolbox import builtin_tools


@pytest.fixture
def setup(cron_settings, fake_llm):
    settings = cron_settings()
    from herald.cron.store import CronStore

    store = CronStore.for_home(settings.home)
    yield settings, store, Scheduler(settings, store, tools=builtin_tools())
    store.close()


def statuses(store, name: str) -> list[tuple[str, str]]:
    return [
        (datetime.fromtimestamp(r.scheduled_for).astimezone().isoformat(), r.status)
        for r in store.runs(name)
    ]


def test_a_daily_berlin_job_is_due_once_on_the_night_clocks_go_back(setup, fake_llm) -> None:
    settings, store, scheduler = setup
    add_job(settings, store, "night", JobSpec(schedule="30 2 * * *", prompt="nightly report",
            tz="Europe/Berlin"), now=utc(2026, 10, 24, 12))  # fmt: skip
    assert scheduler.tick(utc(2026, 10, 25, 0, 29)).records == []  # 02:29 CEST: not yet
    first = scheduler.tick(utc(2026, 10, 25, 0, 31)).records  # 02:31 CEST
    assert [r.status for r in first] == ["ok"]
    assert scheduler.tick(utc(2026, 10, 25, 1, 31)).records == []  # 02:31 CET: the same wall time
    assert len(fake_llm.model_requests()) == 1
    assert store.job("night").next_run == utc(2026, 10, 26, 1, 30).timestamp()


def test_nine_o_clock_new_york_moves_with_summer_time_and_tokyo_is_its_own(setup) -> None:
    settings, store, scheduler = setup
    add_job(settings, store, "ny", JobSpec(schedule="0 9 * * *", prompt="ny brief",
            tz="America/New_York"), now=utc(2026, 3, 7, 15))  # fmt: skip
    add_job(settings, store, "tokyo", JobSpec(schedule="0 9 * * *", prompt="tokyo brief",
            tz="Asia/Tokyo"), now=utc(2026, 3, 7, 15))  # fmt: skip
    # 2026-03-08 09:00 EDT is 13:00 UTC (it was 14:00 UTC the day before, in EST).
    assert scheduler.tick(utc(2026, 3, 8, 0, 1)).records[0].job_name == "tokyo"  # 09:01 JST
    assert scheduler.tick(utc(2026, 3, 8, 12, 59)).records == []
    due = scheduler.tick(utc(2026, 3, 8, 13, 1)).records
    assert [(r.job_name, r.status) for r in due] == [("ny", "ok")]
    assert due[0].scheduled_for == utc(2026, 3, 8, 13).timestamp()


@pytest.mark.parametrize(
    ("policy", "expected", "model_calls"),
    [
        ("skip", ["ok", "missed", "missed", "missed"], 1),
        ("once", ["ok", "missed", "missed", "ok"], 2),
        ("all", ["ok", "ok", "ok", "ok"], 4),
    ],
)
def test_three_hours_of_downtime_with_each_catch_up_policy(
    setup, fake_llm, policy: str, expected: list[str], model_calls: int
) -> None:
    settings, store, scheduler = setup
    add_job(settings, store, "hourly", JobSpec(schedule="@hourly", prompt="check the build",
            catch_up=policy), now=utc(2026, 12, 1, 9, 30))  # fmt: skip
    scheduler.tick(utc(2026, 12, 1, 10, 0, 30))
    # the scheduler is down from 10:01 to 13:30: 11:00, 12:00 and 13:00 pass unseen
    scheduler.tick(utc(2026, 12, 1, 13, 30))
    runs = store.runs("hourly")
    assert [r.status for r in runs] == expected
    assert [r.scheduled_for for r in runs] == [
        utc(2026, 12, 1, h).timestamp() for h in (10, 11, 12, 13)
    ]
    assert [r.late for r in runs[1:] if r.status == "ok"] == [True] * expected[1:].count("ok")
    assert len(fake_llm.model_requests()) == model_calls
    assert store.job("hourly").next_run == utc(2026, 12, 1, 14).timestamp()
    assert scheduler.tick(utc(2026, 12, 1, 13, 31)).records == []  # nothing twice


def test_paused_occurrences_are_recorded_as_skipped_not_lost(setup, fake_llm) -> None:
    settings, store, scheduler = setup
    add_job(settings, store, "p", JobSpec(schedule="every 30m", prompt="ping"),
            now=utc(2026, 12, 1, 9, 0))  # fmt: skip
    set_enabled(store, "p", False)
    scheduler.tick(utc(2026, 12, 1, 9, 31))
    set_enabled(store, "p", True)
    scheduler.tick(utc(2026, 12, 1, 10, 1))
    assert [(r.status, r.reason) for r in store.runs("p")] == [
        ("skipped", "paused"),
        ("ok", "text_response"),
    ]
    assert len(fake_llm.model_requests()) == 1


def test_a_job_over_its_token_budget_is_skipped_before_any_model_call(setup, fake_llm) -> None:
    settings, store, scheduler = setup
    add_job(settings, store, "b", JobSpec(schedule="every 10m", prompt="ping", budget_tokens=1),
            now=utc(2026, 12, 1, 9, 0))  # fmt: skip
    scheduler.tick(utc(2026, 12, 1, 9, 10, 5))
    calls = len(fake_llm.model_requests())
    scheduler.tick(utc(2026, 12, 1, 9, 20, 5))
    assert [r.status for r in store.runs("b")] == ["ok", "skipped"]
    assert store.runs("b")[1].reason == "budget_exhausted"
    assert len(fake_llm.model_requests()) == calls


def test_the_run_is_unattended_in_its_own_cron_session_with_the_narrow_toolset(
    setup, fake_llm
) -> None:
    settings, store, scheduler = setup
    fake_llm.enqueue(Reply.text("done"))
    add_job(settings, store, "s", JobSpec(schedule="in 5m", prompt="remind me to stretch"),
            now=utc(2026, 12, 1, 9, 0))  # fmt: skip
    (record,) = scheduler.tick(utc(2026, 12, 1, 9, 5)).records
    assert record.status == "ok" and record.output == "done"
    assert store.job("s").next_run is None  # a one-shot is over
    from herald.state import StateStore

    with StateStore(settings.home.state_db) as state:
        session = state.get_session(record.session_id)
        assert session is not None and session.source == "cron"
        assert session.title.startswith("cron: s @")
    tools = {t["function"]["name"] for t in fake_llm.model_requests()[0].body.get("tools", [])}
    assert "terminal" in tools and "cronjob" not in tools and "delegate_task" not in tools
    assert "remind me to stretch" in fake_llm.model_requests()[0].last_user_text


def test_the_run_history_is_append_only(setup) -> None:
    settings, store, scheduler = setup
    add_job(settings, store, "a", JobSpec(schedule="in 1m", prompt="x"), now=utc(2026, 12, 1, 9))
    scheduler.tick(utc(2026, 12, 1, 9, 1))
    with pytest.raises(sqlite3.DatabaseError, match="append-only"), store.transaction() as conn:
        conn.execute("UPDATE cron_runs SET status = 'ok'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"), store.transaction() as conn:
        conn.execute("DELETE FROM cron_runs")


def test_a_dangerous_command_in_a_job_is_denied_because_nobody_can_approve(
    setup, fake_llm, tmp_path
) -> None:
    settings, store, scheduler = setup
    victim = tmp_path / "work" / "keep"
    victim.mkdir(parents=True)
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": f"rm -rf {victim}"}),
        Reply.text("could not delete it"),
    )
    add_job(settings, store, "cleanup", JobSpec(schedule="in 1m", prompt="clean up"),
            now=utc(2026, 12, 1, 9))  # fmt: skip
    (record,) = scheduler.tick(utc(2026, 12, 1, 9, 1)).records
    assert record.status == "ok" and victim.exists()
    tool_results = [m for m in fake_llm.model_requests()[-1].messages if m.get("role") == "tool"]
    assert len(tool_results) == 1
    # unattended: not known read-only and no pattern of this job allows it (the refusal
    # names the command and the exact flag that would allow it)
    content = str(tool_results[0]["content"])
    assert f"`rm -rf {victim}` is not known read-only" in content
    assert "herald cron edit cleanup --allow 'rm *'" in content
    assert "(cron)" in content  # the unattended scenario decided


def test_a_job_may_allow_one_named_command_for_its_unattended_runs(
    setup, fake_llm, tmp_path
) -> None:
    settings, store, scheduler = setup
    victim = tmp_path / "work" / "old-build"
    victim.mkdir(parents=True)
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": f"rm -rf {victim}"}),
        Reply.text("cleaned"),
    )
    add_job(settings, store, "cleanup", JobSpec(schedule="in 1m", prompt="clean up",
            allow=[f"rm -rf {victim}"]), now=utc(2026, 12, 1, 9))  # fmt: skip
    (record,) = scheduler.tick(utc(2026, 12, 1, 9, 1)).records
    assert record.status == "ok" and not victim.exists()
    assert settings.config.approvals.always_allow == []  # only that job's runs allow it
    assert settings.config.approvals.unattended_allow == []
