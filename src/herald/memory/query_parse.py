"""What a recall query asks for, besides its words: a time span, and names.

- `time_span(query, now)`: "in May", "May 2023", "in 2022", "last summer",
  "last week", "yesterday", "3 days ago", "this month", ... as a (start, end)
  interval of Unix times, resolved against `now` (a month or season without a
  year is the latest one that has begun by `now`); "since May" runs on to today,
  "before June" back to the start of time.
- `names(query)`: capitalised words that are not sentence-initial function words
  ("Caroline", "LGBTQ", "Paris"): people, places, projects.
- `content_terms(query)`: the words worth matching, without question and
  function words, so "What did Caroline research?" looks for caroline, research.

Pure functions of the text (and `now`): no I/O, nothing raises for any input.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_STOPWORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves also ever kind sort likely might may must shall get got
    there's what's who's it's i'm i've you've we've they've
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
MONTHS = {name.lower(): index for index, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): index for index, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
SEASONS = {
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "winter": (12, 2),
}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
# A capitalised month name is a time, not a name, except "May" at a sentence start
# ("May I ...") which names() also leaves out as a function word.
_NOT_NAMES = STOPWORDS | set(MONTHS) | set(SEASONS) | {"i", "yesterday", "today", "last"}


@dataclass(frozen=True)
class TimeSpan:
    start: float
    end: float
    label: str

    def contains(self, timestamp: float) -> bool:
        return self.start <= timestamp < self.end


def words(text: str) -> list[str]:
    return _WORD.findall(text or "")


def content_terms(query: str) -> list[str]:
    """Lower-cased distinct words that are not function or question words."""
    out: list[str] = []
    for word in words(query):
        lower = word.lower()
        if lower not in STOPWORDS and lower not in out and not lower.endswith("'s"):
            out.append(lower)
        elif lower.endswith("'s") and lower[:-2] not in out and lower[:-2] not in STOPWORDS:
            out.append(lower[:-2])
    return out


def names(query: str) -> list[str]:
    """Capitalised words that name something (people, places, things), in order."""
    out: list[str] = []
    for word in words(query):
        base = word[:-2] if word.lower().endswith("'s") else word
        if base[:1].isupper() and base.lower() not in _NOT_NAMES and base not in out:
            out.append(base)
    return out


def _utc(year: int, month: int, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def _month_span(year: int, month: int) -> tuple[datetime, datetime]:
    start = _utc(year, month)
    end = _utc(year + (month == 12), month % 12 + 1)
    return start, end


def _latest_year(month: int, now: datetime) -> int:
    """The year of the latest `month` that has begun by `now`."""
    return now.year if month <= now.month else now.year - 1


def _season_span(season: str, year: int) -> tuple[datetime, datetime]:
    first, last = SEASONS[season]
    start_year = year - 1 if first > last else year  # winter starts the December before
    start = _utc(start_year, first)
    return start, _month_span(year, last)[1]


def _span(start: datetime, end: datetime, label: str) -> TimeSpan:
    return TimeSpan(start.timestamp(), end.timestamp(), label)


def time_span(query: str, now: float) -> TimeSpan | None:
    """The interval the query's time words name, or None when it names none. After
    "since" or "after" it runs on to the end of today, after "before", "by", "until" or
    "as of" back to the start of time (`_open_end`)."""
    try:
        moment = datetime.fromtimestamp(now, UTC)
        tokens = [w.lower() for w in words(query)]
        span = _time_span(tokens, moment)
        return None if span is None else _open_end(" ".join(tokens), span, moment)
    except (ValueError, OverflowError, OSError):
        return None


_SEASON_WORDS = "|".join(SEASONS)
_MONTH_WORDS = "|".join(sorted(MONTHS, key=len, reverse=True))
# The time words a lead word can open: "since May", "before the end of June", "after
# last summer", "by 2024", "prior to 3 March". Matched on the query's lower-cased words
# joined by single spaces.
_TIME_START = (
    r"(?:the )?(?:(?:start|end|beginning|middle) of )?(?:early |late |mid )?"
    rf"(?:(?:last|this|past) (?:week|month|year|{_SEASON_WORDS})|yesterday|today"
    rf"|(?:19|20)\d\d|\d{{1,2}}(?:st|nd|rd|th)?|{_MONTH_WORDS}|{_SEASON_WORDS})\b"
)
_SINCE = re.compile(rf"\b(?:since|after) {_TIME_START}")
_UNTIL = re.compile(rf"\b(?:before|by|until|till|as of|prior to|up to|up until) {_TIME_START}")
_UNIT_WORDS = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years"})


def _lead(pattern: re.Pattern[str], text: str) -> bool:
    """Whether `pattern` (a lead word and time words) is in `text`, not after a unit
    ("the week before 16 November"). A plain search: a pattern that captured the word
    before took quadratic time on a long run of letters."""
    found = pattern.search(text)
    if found is None:
        return False
    before = text[: found.start()].rsplit(None, 1)
    return not before or before[-1] not in _UNIT_WORDS


def _open_end(text: str, span: TimeSpan, now: datetime) -> TimeSpan:
    """`span` with one end opened when a lead word comes right before its time words:
    "since"/"after" X runs from X's start to the end of today; "before"/"by"/"until"/
    "as of"/"prior to" X from the start of time to X's end. X itself stays inside:
    the span lifts messages, it does not filter them, and what happened "before the
    20th" is often told on the 20th. "The week before 16 November" is a closed span
    of its own, and a query with both kinds of lead word keeps the span it names."""
    since, until = (_lead(pattern, text) for pattern in (_SINCE, _UNTIL))
    if since == until:  # neither, or both
        return span
    if since:
        end = now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
        return TimeSpan(span.start, max(span.end, end.timestamp()), f"since {span.label}")
    return TimeSpan(0.0, span.end, f"until {span.label}")


def _time_span(tokens: list[str], now: datetime) -> TimeSpan | None:
    """The span the query's lower-cased words `tokens` name, both ends closed."""
    text = " ".join(tokens)
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if "yesterday" in tokens:
        return _span(day - timedelta(days=1), day, "yesterday")
    if "today" in tokens:
        return _span(day, day + timedelta(days=1), "today")
    ago = re.search(r"\b(\d+|a|an|one|two|three|four|five|six) (day|week|month|year)s? ago\b", text)
    if ago:
        count = int(ago.group(1)) if ago.group(1).isdigit() else _NUMBER_WORDS[ago.group(1)]
        days = count * _UNITS[ago.group(2)]
        slack = max(1, _UNITS[ago.group(2)] // 2 + (ago.group(2) != "day"))
        centre = day - timedelta(days=days)
        return _span(centre - timedelta(days=slack), centre + timedelta(days=slack + 1), ago[0])
    relative = re.search(
        r"\b(last|this|past) (week|month|year|spring|summer|autumn|fall|winter)\b", text
    )
    if relative:
        which, unit = relative.group(1), relative.group(2)
        if unit in SEASONS:
            year = now.year
            start, end = _season_span(unit, year)
            if which == "last" or start > now:
                while end > now or (which == "last" and start <= now < end):
                    year -= 1
                    start, end = _season_span(unit, year)
            return _span(start, end, relative[0])
        if unit == "week":
            monday = day - timedelta(days=day.weekday())
            if which == "this":
                return _span(monday, monday + timedelta(days=7), relative[0])
            return _span(monday - timedelta(days=7), monday, relative[0])
        if unit == "month":
            start, end = _month_span(now.year, now.month)
            if which == "this":
                return _span(start, end, relative[0])
            prev = start - timedelta(days=1)
            return _span(*_month_span(prev.year, prev.month), relative[0])
        if which == "this":
            return _span(_utc(now.year, 1), _utc(now.year + 1, 1), relative[0])
        return _span(_utc(now.year - 1, 1), _utc(now.year, 1), relative[0])
    days = _days(tokens, now)
    if days:
        start, end = min(days) - timedelta(days=1), max(days) + timedelta(days=2)
        if re.search(r"\bweeks? before\b", text):
            start = min(days) - timedelta(days=8)
        return _span(start, end, " to ".join(d.strftime("%Y-%m-%d") for d in sorted(set(days))))
    for index, token in enumerate(tokens):
        month = MONTHS.get(token)
        if month is None or (token == "may" and not _may_is_month(tokens, index)):
            continue
        following = tokens[index + 1 : index + 3]
        year = next((int(t) for t in following if re.fullmatch(r"(19|20)\d\d", t)), None)
        if year is None:
            year = _latest_year(month, now)
        return _span(*_month_span(year, month), f"{token} {year}")
    for token in tokens:
        if re.fullmatch(r"(19|20)\d\d", token):
            year = int(token)
            return _span(_utc(year, 1), _utc(year + 1, 1), token)
    return None


_DAY = re.compile(r"([1-9]|[12]\d|3[01])(?:st|nd|rd|th)?")
_YEAR = re.compile(r"(19|20)\d\d")


def _days(tokens: list[str], now: datetime) -> list[datetime]:
    """The calendar days the query names ("9 November, 2022", "November 9", "the 3rd
    of March"): a date without a year takes the next year written after it, else the
    latest such day begun by `now`. A day the month does not have names nothing."""
    out: list[datetime] = []
    for index, token in enumerate(tokens):
        month = MONTHS.get(token)
        if month is None:
            continue
        before = tokens[index - 2] if index > 1 and tokens[index - 1] == "of" else ""
        before = before or (tokens[index - 1] if index > 0 else "")
        after = tokens[index + 1] if index + 1 < len(tokens) else ""
        day = _DAY.fullmatch(before) or _DAY.fullmatch(after)
        if day is None:
            continue
        year = next((int(t) for t in tokens[index + 1 :] if _YEAR.fullmatch(t)), None)
        try:
            if year is None:
                year = now.year
                if _utc(year, month, int(day.group(1))) > now:
                    year -= 1
            out.append(_utc(year, month, int(day.group(1))))
        except ValueError:  # 31 February
            continue
    return out


def _may_is_month(tokens: list[str], index: int) -> bool:
    """'in May', 'May 2023', 'since may', 'before May' are the month; 'may I', 'you may'
    are not."""
    before = tokens[index - 1] if index > 0 else ""
    after = tokens[index + 1] if index + 1 < len(tokens) else ""
    return before in {
        "in",
        "since",
        "after",
        "before",
        "by",
        "until",
        "till",
        "during",
        "of",
        "early",
        "late",
        "mid",
        "last",
        "this",
    } or bool(re.fullmatch(r"\d{1,4}", after))
