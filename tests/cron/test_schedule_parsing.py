"""Every schedule form `parse_schedule` accepts, what it means, and every way it refuses."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from herald.cron import ScheduleError, parse_schedule

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)  # a Tuesday


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "tz", "kind", "detail", "first"),
    [
        ("0 9 * * 1-5", None, "cron", "0 9 * * 1-5", utc(2026, 12, 2, 9, 0)),
        ("  */15   *  * * * ", None, "cron", "*/15 * * * *", utc(2026, 12, 1, 9, 45)),
        ("0 9 * * mon-fri", "Europe/Berlin", "cron", "0 9 * * mon-fri", utc(2026, 12, 2, 8, 0)),
        ("@hourly", None, "cron", "0 * * * *", utc(2026, 12, 1, 10, 0)),
        ("@daily", None, "cron", "0 0 * * *", utc(2026, 12, 2, 0, 0)),
        ("@weekly", None, "cron", "0 0 * * 0", utc(2026, 12, 6, 0, 0)),
        ("@monthly", None, "cron", "0 0 1 * *", utc(2027, 1, 1, 0, 0)),
        ("@yearly", None, "cron", "0 0 1 1 *", utc(2027, 1, 1, 0, 0)),
        ("@DAILY", "America/New_York", "cron", "0 0 * * *", utc(2026, 12, 2, 5, 0)),
        ("30m", None, "interval", 1800, utc(2026, 12, 1, 10, 0)),
        ("every 2h", None, "interval", 7200, utc(2026, 12, 1, 11, 30)),
        ("1d", None, "interval", 86400, utc(2026, 12, 2, 9, 30)),
        ("every 90 seconds", None, "interval", 90, utc(2026, 12, 1, 9, 31, 30)),
        ("every 5 minutes", None, "interval", 300, utc(2026, 12, 1, 9, 35)),
        ("every hour", None, "interval", 3600, utc(2026, 12, 1, 10, 30)),
        ("2026-12-24T08:00", None, "once", None, utc(2026, 12, 24, 8, 0)),
        ("2026-12-24 08:00", "Europe/Berlin", "once", None, utc(2026, 12, 24, 7, 0)),
        ("2026-12-24T08:00+05:00", "Europe/Berlin", "once", None, utc(2026, 12, 24, 3, 0)),
        ("2026-12-24T08:00:00Z", None, "once", None, utc(2026, 12, 24, 8, 0)),
        ("tomorrow 08:00", None, "once", None, utc(2026, 12, 2, 8, 0)),
        ("tomorrow at 08:00", "Asia/Tokyo", "once", None, utc(2026, 12, 1, 23, 0)),  # 18:30 JST now
        ("today 17:30", None, "once", None, utc(2026, 12, 1, 17, 30)),
        ("in 20m", None, "once", None, utc(2026, 12, 1, 9, 50)),
        ("in 2 hours", None, "once", None, utc(2026, 12, 1, 11, 30)),
    ],
)
def test_every_form_parses_to_its_kind_and_first_occurrence(
    text: str, tz: str | None, kind: str, detail: object, first: datetime
) -> None:
    schedule = parse_schedule(text, tz=tz, now=NOW)
    assert schedule.kind == kind
    if kind == "cron":
        assert schedule.expr == detail
    elif kind == "interval":
        assert schedule.seconds == detail
    assert schedule.next_after(NOW) == first
    if kind == "once":
        assert schedule.next_after(first) is None  # a one-shot fires once


@pytest.mark.parametrize(
    ("text", "tz", "says"),
    [
        ("", None, "empty"),
        ("   ", None, "empty"),
        ("@reboot", None, "unknown schedule alias"),
        ("61 * * * *", None, "not a valid cron expression"),
        ("* * * *", None, "cannot read the schedule"),
        ("0 0 9 * * 1-5", None, "has 6 fields"),
        ("0 9 * * 1-5", "Mars/Olympus", "unknown time zone"),
        ("every 0 minutes", None, "is zero"),
        ("0s", None, "is zero"),
        ("every fortnight", None, "cannot read the schedule"),
        ("in 0m", None, "is now, not later"),
        ("tomorrow 25:00", None, "not a time of day"),
        ("2026-13-40T08:00", None, "not a valid ISO 8601 time"),
        ("2026-11-30T08:00", None, "already past"),
        ("2026-12-01T09:30:00Z", None, "already past"),
        ("today 08:00", None, "already past"),
        ("next tuesday", None, "cannot read the schedule"),
    ],
)
def test_bad_schedules_say_what_is_wrong_and_show_a_valid_example(
    text: str, tz: str | None, says: str
) -> None:
    with pytest.raises(ScheduleError) as caught:
        parse_schedule(text, tz=tz, now=NOW)
    message = str(caught.value)
    assert says in message
    assert "e.g." in message or "such as" in message or "use" in message


def test_naive_next_after_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_schedule("@hourly").next_after(datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("tz", "expected"), [("Europe/Paris", "Europe/Paris"), (":Asia/Tokyo", "Asia/Tokyo")]
)
def test_the_machine_zone_comes_from_tz(
    monkeypatch: pytest.MonkeyPatch, tz: str, expected: str
) -> None:
    from herald.cron import local_zone_name

    monkeypatch.setenv("TZ", tz)
    assert local_zone_name() == expected


def test_an_unusable_tz_variable_falls_back_to_a_real_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    from herald.cron import local_zone_name

    monkeypatch.setenv("TZ", ":/not/a/zone")
    parse_schedule("@daily", tz=local_zone_name())  # never an error for the user
