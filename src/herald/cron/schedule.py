"""`parse_schedule`: the schedule forms a job accepts, and when each fires next.

Three kinds:

* ``cron``: a 5-field expression (``0 9 * * 1-5``) or an alias (``@hourly``,
  ``@daily``, ``@weekly``, ``@monthly``, ``@yearly``), read on the wall clock of
  the schedule's time zone. Across DST changes the wall clock decides: a time
  that happens twice (clocks going back) fires once, at its first occurrence; a
  time that does not exist (clocks going forward) fires at the first minute after
  the gap.
* ``interval``: ``30m``, ``every 2h``, ``1d``, ``every 90 seconds``; each
  occurrence is the previous one plus the interval (real seconds, no DST effect).
* ``once``: ISO 8601 (``2026-12-24T08:00``, with or without a zone; without one
  it is read in the schedule's time zone), ``tomorrow 08:00``, ``today 17:30``,
  ``in 20m``. A time already past is an error.

All instants handed in and out are timezone-aware; `next_after` answers in UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

ScheduleKind = Literal["cron", "interval", "once"]

EXAMPLES = (
    "'0 9 * * 1-5' (weekdays at 09:00), '@daily', 'every 2h', '30m', "
    "'2026-12-24T08:00', 'tomorrow 08:00' or 'in 20m'"
)

ALIASES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}

_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
_UNIT_RE = "|".join(sorted(_UNITS, key=len, reverse=True))
_INTERVAL_RE = re.compile(rf"^(?:every\s+)?(\d+)\s*({_UNIT_RE})$", re.I)
_EVERY_ONE_RE = re.compile(r"^every\s+(second|minute|hour|day|week)$", re.I)
_IN_RE = re.compile(rf"^in\s+(\d+)\s*({_UNIT_RE})$", re.I)
_DAY_AT_RE = re.compile(r"^(today|tomorrow)\s+(?:at\s+)?(\d{1,2}):(\d{2})$", re.I)
_MAX_STEPS = 2000  # candidates examined by one next_after before giving up
MAX_INTERVAL_SECONDS = 100 * 365 * 86400


class ScheduleError(ValueError):
    """A schedule (or time zone) that cannot be used; the message shows a valid example."""


@dataclass(frozen=True)
class Schedule:
    kind: ScheduleKind
    text: str  # as the user wrote it
    tz: str = "UTC"
    expr: str | None = None  # cron: the normalized 5-field form
    seconds: int | None = None  # interval: the period
    at: datetime | None = None  # once: the instant (UTC)

    @property
    def zone(self) -> tzinfo:
        return resolve_zone(self.tz)

    def next_after(self, dt: datetime) -> datetime | None:
        """The first occurrence strictly after `dt` (aware), in UTC; None when there is
        none (a one-shot already past)."""
        if dt.tzinfo is None:
            raise ValueError("next_after needs a timezone-aware datetime")
        dt = dt.astimezone(UTC)
        if self.kind == "once":
            assert self.at is not None
            return self.at if self.at > dt else None
        if self.kind == "interval":
            assert self.seconds is not None
            return dt + timedelta(seconds=self.seconds)
        return _next_cron(self.expr or "", self.zone, dt)

    def describe(self) -> str:
        if self.kind == "interval":
            return f"every {_human_seconds(self.seconds or 0)}"
        if self.kind == "once":
            assert self.at is not None
            return f"once at {self.at.astimezone(self.zone).isoformat(timespec='minutes')}"
        return f"cron '{self.expr}' ({self.tz})"


def resolve_zone(name: str | None) -> tzinfo:
    if not name or name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(
            f"unknown time zone {name!r}: use an IANA name such as 'Europe/Berlin', "
            "'America/New_York' or 'UTC'"
        ) from exc


def local_zone_name() -> str:
    """The machine's IANA zone name when it can be found, else UTC."""
    import os
    from pathlib import Path

    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        target = str(Path("/etc/localtime").resolve())
        candidates.append(target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else "")
    except OSError:
        pass
    for name in candidates:
        if not name:
            continue
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
        return name
    return "UTC"


def parse_schedule(text: str, *, tz: str | None = None, now: datetime | None = None) -> Schedule:
    """Parse a schedule; `tz` (IANA name, default UTC) is where wall-clock forms are read,
    `now` (default: the current time) decides what "past", "tomorrow" and "in" mean.

    A schedule that would never run (30 February) or whose next run is beyond what a
    date can hold is refused here, as a `ScheduleError`, not when the scheduler first
    asks for its next run."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    shown = " ".join((text or "").split())
    try:
        schedule = _parse(text, tz=tz, now=now)
    except OverflowError:  # a count too large for a date or a C integer
        raise ScheduleError(
            f"the schedule {shown!r} reaches past the year 9999: use a smaller number, "
            f"such as {EXAMPLES}"
        ) from None
    try:
        upcoming = schedule.next_after(now)
    except (OverflowError, ValueError, KeyError):  # datetime range, croniter's bad dates
        upcoming = None
    if schedule.kind == "interval" and (schedule.seconds or 0) > MAX_INTERVAL_SECONDS:
        raise ScheduleError(
            f"the interval {shown!r} is longer than {MAX_INTERVAL_SECONDS // (365 * 86400)} "
            "years: give a shorter one, or a one-shot time"
        )
    if upcoming is None:
        raise ScheduleError(
            f"the schedule {shown!r} has no next run (a date that does not exist, such as "
            "30 February, or one past the year 9999): check the day-of-month and month fields"
        )
    return schedule


def _parse(text: str, *, tz: str | None, now: datetime) -> Schedule:
    zone_name = tz or "UTC"
    zone = resolve_zone(zone_name)
    raw = text
    text = " ".join((text or "").split())
    if not text:
        raise ScheduleError(f"the schedule is empty: give one such as {EXAMPLES}")
    lowered = text.lower()
    if lowered.startswith("@"):
        expr = ALIASES.get(lowered)
        if expr is None:
            raise ScheduleError(
                f"unknown schedule alias {text!r}: use one of "
                f"{', '.join(a for a in ALIASES if a not in ('@midnight', '@annually'))}, "
                "or a 5-field cron expression such as '0 9 * * 1-5'"
            )
        return Schedule("cron", raw, zone_name, expr=expr)
    interval = _parse_interval(lowered)
    if interval is not None:
        return Schedule("interval", raw, zone_name, seconds=interval)
    at = _parse_once(text, zone, now)
    if at is not None:
        if at <= now:
            shown = at.astimezone(zone).isoformat(timespec="minutes")
            raise ScheduleError(
                f"the one-shot time {text!r} ({shown}) is already past: give a future time "
                f"such as {(now + timedelta(hours=1)).astimezone(zone):%Y-%m-%dT%H:%M} or 'in 20m'"
            )
        return Schedule("once", raw, zone_name, at=at)
    fields = text.split(" ")
    if len(fields) == 5 and all(re.fullmatch(r"[\w*/,\-?#LW]+", f) for f in fields):
        return Schedule("cron", raw, zone_name, expr=_check_cron(" ".join(fields), text))
    if len(fields) in (6, 7) and all(re.fullmatch(r"[\w*/,\-?#LW]+", f) for f in fields):
        raise ScheduleError(
            f"{text!r} has {len(fields)} fields; Herald takes 5-field cron "
            "(minute hour day-of-month month day-of-week), e.g. '0 9 * * 1-5'"
        )
    raise ScheduleError(f"cannot read the schedule {text!r}: use a form such as {EXAMPLES}")


def _parse_interval(text: str) -> int | None:
    m = _EVERY_ONE_RE.match(text)
    if m:
        return _UNITS[m.group(1)]
    m = _INTERVAL_RE.match(text)
    if not m:
        return None
    seconds = int(m.group(1)) * _UNITS[m.group(2).lower()]
    if seconds <= 0:
        raise ScheduleError(
            f"the interval {text!r} is zero: give a positive one such as '30m' or 'every 2h'"
        )
    return seconds


def _parse_once(text: str, zone: tzinfo, now: datetime) -> datetime | None:
    m = _IN_RE.match(text)
    if m:
        seconds = int(m.group(1)) * _UNITS[m.group(2).lower()]
        if seconds <= 0:
            raise ScheduleError(f"{text!r} is now, not later: give e.g. 'in 20m'")
        return now + timedelta(seconds=seconds)
    m = _DAY_AT_RE.match(text)
    if m:
        hour, minute = int(m.group(2)), int(m.group(3))
        if hour > 23 or minute > 59:
            raise ScheduleError(f"{text!r} is not a time of day: use 24-hour HH:MM, e.g. 08:00")
        day = now.astimezone(zone).date()
        if m.group(1).lower() == "tomorrow":
            day += timedelta(days=1)
        wall = datetime(day.year, day.month, day.day, hour, minute)
        return _localize(wall, zone)
    if not re.match(r"^\d{4}-\d{2}-\d{2}", text):
        return None
    candidate = text.replace(" ", "T", 1).replace("z", "Z")
    if candidate.endswith("Z"):
        candidate = candidate[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(candidate)
    except ValueError as exc:
        raise ScheduleError(
            f"{text!r} is not a valid ISO 8601 time: use e.g. '2026-12-24T08:00' or "
            "'2026-12-24T08:00+01:00'"
        ) from exc
    if parsed.tzinfo is None:
        return _localize(parsed, zone)
    return parsed.astimezone(UTC)


def _check_cron(expr: str, text: str) -> str:
    from croniter import croniter

    if not croniter.is_valid(expr):
        raise ScheduleError(
            f"{text!r} is not a valid cron expression: the fields are minute (0-59), "
            "hour (0-23), day of month (1-31), month (1-12), day of week (0-6, Sun=0); "
            "e.g. '0 9 * * 1-5' is 09:00 on weekdays"
        )
    return expr


def _localize(wall: datetime, zone: tzinfo) -> datetime:
    """A naive wall time in `zone` as a UTC instant: the first of two when it happens
    twice, the first minute after the gap when it does not exist."""
    for _ in range(24 * 60):
        aware = wall.replace(tzinfo=zone, fold=0)
        instant = aware.astimezone(UTC)
        if instant.astimezone(zone).replace(tzinfo=None) == wall:
            return instant
        wall = (wall + timedelta(minutes=1)).replace(second=0, microsecond=0)
    raise ScheduleError(f"no valid local time near {wall} in {zone}")


def _next_cron(expr: str, zone: tzinfo, dt: datetime) -> datetime | None:
    from croniter import croniter

    wall = dt.astimezone(zone).replace(tzinfo=None)
    it = croniter(expr, wall - timedelta(hours=3))  # wall time can step back in the fall
    for _ in range(_MAX_STEPS):
        candidate = it.get_next(datetime)
        instant = _localize(candidate, zone)
        if instant > dt:
            return instant
    return None


def _human_seconds(seconds: int) -> str:
    for unit, size in (("week", 604800), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


__all__ = [
    "ALIASES",
    "EXAMPLES",
    "Schedule",
    "ScheduleError",
    "ScheduleKind",
    "local_zone_name",
    "parse_schedule",
    "resolve_zone",
]
