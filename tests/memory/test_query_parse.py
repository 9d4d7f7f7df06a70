"""Query understanding for recall: time spans, names and content words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from herald.memory.query_parse import content_terms, names, time_span

NOW = datetime(2023, 10, 18, 15, 30, tzinfo=UTC).timestamp()  # a Wednesday


def span_dates(query: str, now: float = NOW) -> tuple[str, str] | None:
    span = time_span(query, now)
    if span is None:
        return None
    fmt = "%Y-%m-%d"
    start = datetime.fromtimestamp(span.start, UTC).strftime(fmt)
    end = datetime.fromtimestamp(span.end, UTC).strftime(fmt)
    return start, end


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did we talk about in May", ("2023-05-01", "2023-06-01")),
        ("the trip in May 2022", ("2022-05-01", "2022-06-01")),
        ("anything from December?", ("2022-12-01", "2023-01-01")),  # latest December begun
        ("what happened in October", ("2023-10-01", "2023-11-01")),  # the current month
        ("plans for Sept 2021", ("2021-09-01", "2021-10-01")),
        ("the concert in 2022", ("2022-01-01", "2023-01-01")),
        ("where did she go last summer", ("2023-06-01", "2023-09-01")),
        ("last winter's ski trip", ("2022-12-01", "2023-03-01")),
        ("this summer", ("2023-06-01", "2023-09-01")),
        ("what did I cook yesterday", ("2023-10-17", "2023-10-18")),
        ("notes from today", ("2023-10-18", "2023-10-19")),
        ("last week", ("2023-10-09", "2023-10-16")),
        ("this week", ("2023-10-16", "2023-10-23")),
        ("last month", ("2023-09-01", "2023-10-01")),
        ("this year", ("2023-01-01", "2024-01-01")),
        ("last year", ("2022-01-01", "2023-01-01")),
        ("3 days ago", ("2023-10-14", "2023-10-17")),
        ("two weeks ago", ("2023-09-30", "2023-10-09")),  # give or take half a week
        # a day, with a day either side (the words were said near it, in some time zone)
        ("What did Nate make on 9 November, 2022?", ("2022-11-08", "2022-11-11")),
        ("what did he say on November 9, 2022", ("2022-11-08", "2022-11-11")),
        ("the photo shared on December 1,2023", ("2023-11-30", "2023-12-03")),
        ("Which team did John sign with on 21 May?", ("2023-05-20", "2023-05-23")),
        ("on the 3rd of March 2021", ("2021-03-02", "2021-03-05")),
        ("Where was John between August 11 and August 15 2023?", ("2023-08-10", "2023-08-17")),
        ("from 28 February to 2 March 2023", ("2023-02-27", "2023-03-04")),
        ("the week before 16 November 2023", ("2023-11-08", "2023-11-18")),
        ("what about 31 February 2023", ("2023-02-01", "2023-03-01")),  # no such day: the month
        ("in May 2023", ("2023-05-01", "2023-06-01")),  # a year is not a day
    ],
)
def test_time_words_become_a_span(query: str, expected: tuple[str, str]) -> None:
    assert span_dates(query) == expected


# "since May" is May until now, "before June" everything up to June: a span with one
# open end. The named period itself stays inside (a lift, not a filter: what happened
# "before the 20th" is often told on the 20th), and the open end runs to the start of
# the history or to the end of today.
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what have we talked about since May", ("2023-05-01", "2023-10-19")),
        ("everything after June 2022", ("2022-06-01", "2023-10-19")),
        ("since last summer", ("2023-06-01", "2023-10-19")),
        ("since 2021", ("2021-01-01", "2023-10-19")),
        ("What happened after 9 November, 2022?", ("2022-11-08", "2023-10-19")),
        ("How many pets did Andrew have, as of September 2023?", ("1970-01-01", "2023-10-01")),
        ("what did I plan before June", ("1970-01-01", "2023-07-01")),
        ("Which book had she read by the end of May 2023?", ("1970-01-01", "2023-06-01")),
        ("what had we agreed until last week", ("1970-01-01", "2023-10-16")),
        ("anything prior to 3 March 2023", ("1970-01-01", "2023-03-05")),
        ("SINCE   MAY", ("2023-05-01", "2023-10-19")),
        # not an open end: the word does not lead into the time words
        ("the week before 16 November 2023", ("2023-11-08", "2023-11-18")),
        ("what did I buy by the river in May", ("2023-05-01", "2023-06-01")),
        ("since we met in May", ("2023-05-01", "2023-06-01")),
        ("since last time we met in May", ("2023-05-01", "2023-06-01")),
        ("anything from December?", ("2022-12-01", "2023-01-01")),
    ],
)
def test_since_and_before_open_one_end_of_the_span(query: str, expected: tuple[str, str]) -> None:
    assert span_dates(query) == expected


def test_an_open_span_says_which_end_is_open() -> None:
    since, until = time_span("since May", NOW), time_span("before May", NOW)
    assert since is not None and since.label == "since may 2023"
    assert until is not None and until.label == "until may 2023"


def test_a_long_run_of_letters_is_read_in_one_pass() -> None:
    # A pattern that captured the word before "since" went back over the whole run at
    # every letter: 32,000 letters took 10 s. Here 400,000 would take over 15 minutes.
    run = "a" * 400_000
    assert time_span(f"since May {run}", NOW) is not None
    assert time_span(f"{run} before June", NOW) is not None
    assert time_span(run, NOW) is None


def test_last_summer_while_it_is_summer_is_the_year_before() -> None:
    july = datetime(2023, 7, 10, tzinfo=UTC).timestamp()
    assert span_dates("last summer", july) == ("2022-06-01", "2022-09-01")
    assert span_dates("this summer", july) == ("2023-06-01", "2023-09-01")


@pytest.mark.parametrize(
    "query",
    [
        "may I ask what you think",
        "you may want to check",
        "what is Caroline's favourite book",
        "",
        "123456 is a number not a year",
        "\x00\ud800 weird",
    ],
)
def test_no_time_words_no_span(query: str) -> None:
    assert time_span(query, NOW) is None


def test_names_are_capitalised_non_function_words() -> None:
    assert names("When did Caroline go to the LGBTQ support group?") == ["Caroline", "LGBTQ"]
    assert names("What is Melanie's favourite book?") == ["Melanie"]
    assert names("What did we do in May last summer?") == []  # time words are not names
    assert names("Did Jon and Gina meet in Paris? Jon said so.") == ["Jon", "Gina", "Paris"]


def test_content_terms_drop_question_and_function_words() -> None:
    assert content_terms("What did Caroline research?") == ["caroline", "research"]
    assert content_terms("What is Melanie's favourite book?") == ["melanie", "favourite", "book"]
    assert content_terms("what is it") == []
