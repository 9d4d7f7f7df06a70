"""Cron schedules follow the wall clock of their zone across DST changes."""

from __future__ import annotations

from datetime import UTC, datetime

from herald.cron import parse_schedule


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def occurrences(text: str, tz: str, start: datetime, count: int) -> list[datetime]:
    schedule = parse_schedule(text, tz=tz, now=start)
    out, at = [], start
    for _ in range(count):
        nxt = schedule.next_after(at)
        assert nxt is not None
        out.append(nxt)
        at = nxt
    return out


def test_a_daily_time_that_happens_twice_when_clocks_go_back_fires_once() -> None:
    # Berlin, 2026-10-25: 03:00 CEST -> 02:00 CET, so 02:30 happens twice.
    got = occurrences("30 2 * * *", "Europe/Berlin", utc(2026, 10, 24, 12), 3)
    assert got == [utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30), utc(2026, 10, 27, 1, 30)]


def test_a_daily_time_inside_the_spring_gap_fires_right_after_it() -> None:
    # Berlin, 2026-03-29: 02:00 CET -> 03:00 CEST, 02:30 does not exist that day.
    got = occurrences("30 2 * * *", "Europe/Berlin", utc(2026, 3, 28, 12), 3)
    assert got == [utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 30), utc(2026, 3, 31, 0, 30)]


def test_nine_o_clock_stays_nine_o_clock_local_across_the_change() -> None:
    # New York, 2026-03-08: EST (-5) -> EDT (-4).
    got = occurrences("0 9 * * *", "America/New_York", utc(2026, 3, 7, 0), 2)
    assert got == [utc(2026, 3, 7, 14), utc(2026, 3, 8, 13)]


def test_an_hourly_job_never_fires_twice_for_one_instant_in_the_gap() -> None:
    got = occurrences("0 * * * *", "Europe/Berlin", utc(2026, 3, 28, 23, 30), 4)
    assert got == sorted(set(got))
    assert got == [
        utc(2026, 3, 29, 0),
        utc(2026, 3, 29, 1),
        utc(2026, 3, 29, 2),
        utc(2026, 3, 29, 3),
    ]


def test_intervals_are_real_seconds_whatever_the_zone() -> None:
    got = occurrences("every 1h", "Europe/Berlin", utc(2026, 10, 25, 0, 0), 3)
    assert got == [utc(2026, 10, 25, 1), utc(2026, 10, 25, 2), utc(2026, 10, 25, 3)]
