"""Schedules with no next run, or one no date can hold, are a clear `ScheduleError` when
they are parsed, and `herald cron add` says so without a traceback (issue 30)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from herald.cron.schedule import ScheduleError, parse_schedule

NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("every 99999999999999999999 weeks", "longer than 100 years"),
        ("every 6000 weeks", "longer than 100 years"),
        ("in 99999999999999999999 weeks", "past the year 9999"),
        ("in 999999999 weeks", "past the year 9999"),
        ("0 0 30 2 *", "no next run"),
        ("0 0 31 4 *", "no next run"),
        ("0 0 31 2,4,6 *", "no next run"),
    ],
)
def test_a_schedule_without_a_next_run_is_refused_when_parsed(text: str, says: str) -> None:
    with pytest.raises(ScheduleError, match=says):
        parse_schedule(text, now=NOW)


@pytest.mark.parametrize("text", ["every 2h", "0 9 * * 1-5", "0 0 29 2 *", "in 20m", "@yearly"])
def test_ordinary_schedules_still_parse(text: str) -> None:
    schedule = parse_schedule(text, now=NOW)
    assert schedule.next_after(NOW) is not None


@pytest.mark.slow
def test_cron_add_prints_the_reason_not_a_traceback(cron_settings, herald) -> None:
    cron_settings()
    for text in ("every 99999999999999999999 weeks", "0 0 30 2 *"):
        refused = herald("cron", "add", "x", "--schedule", text, "--prompt", "p", check=False)
        assert refused.returncode == 2, refused.stderr
        assert "Traceback" not in refused.stderr
        assert refused.stderr.startswith("error: the ") and text in refused.stderr
