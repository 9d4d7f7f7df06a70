"""The gazetteer behind place questions: what a query asks for, what a text names."""

from __future__ import annotations

import pytest

from herald.memory.places import Ask, asked, fits, gazetteer, mentions, names_place


@pytest.mark.parametrize(
    ("query", "ask"),
    [
        ("What state did Nate visit?", Ask("state")),
        ("In which state is the shelter James adopted the puppy from?", Ask("state")),
        ("Which US states might Tim be in during September?", Ask("state", us=True)),
        ("What European countries has Maria been to?", Ask("country", "EU")),
        ("which country has Tim visited most frequently?", Ask("country")),
        ("Which cities has John been to?", Ask("city")),
        ("Which U.S. cities does John mention?", Ask("city", us=True)),
        ("what small town did we stop in?", Ask("city")),
        ("What Asian country did I fly to last spring?", Ask("country", "AS")),
        ("Does James live in Connecticut?", Ask("any", within=frozenset({"Connecticut"}))),
        ("Which city in Ireland will Tim stay in?", Ask("city", within=frozenset({"Ireland"}))),
        ("Did we ever go to England?", Ask("any", within=frozenset({"United Kingdom"}))),
        ("Which country did James visit besides Canada?", Ask("country")),  # none is inside
    ],
)
def test_the_kind_of_place_a_query_asks_for(query: str, ask: Ask) -> None:
    assert asked(query) == ask


@pytest.mark.parametrize(
    "query",
    [
        "What state of mind was he in after the game?",  # no place
        "Where did I put the keys?",  # a place, but of no kind the gazetteer knows
        "What did the report state?",
        "How is the state machine tested?",
        "",
    ],
)
def test_a_query_that_asks_for_no_kind_of_place(query: str) -> None:
    assert asked(query) is None


def test_a_speakers_name_is_not_read_as_a_place() -> None:
    assert asked("What did Georgia say about the trip?", people={"georgia"}) is None
    assert asked("What did Georgia say about the trip?") == Ask(
        "any", within=frozenset({"Georgia"})
    )  # the state and the country, when nobody of that name speaks


def test_places_inside_a_named_country_or_state_answer_for_it() -> None:
    connecticut = asked("Does James live in Connecticut?")
    assert connecticut is not None
    assert names_place("I adopted a pup from a shelter in Stamford", connecticut)
    assert names_place("Connecticut winters are long", connecticut)
    assert not names_place("I adopted a pup from a shelter in Boston", connecticut)
    ireland = asked("Which city in Ireland will Tim stay in?")
    assert ireland is not None
    assert names_place("Dublin, for the whole semester!", ireland)
    assert not names_place("Ireland, for the whole semester!", ireland)  # not a city


def test_the_places_a_text_names() -> None:
    found = mentions(
        "Nice to see you! That pic is from a hike near Fort Wayne, then Paris's cafes, "
        "the UK and the United States of America. I love turkey and reading."
    )
    assert [(p.name, p.kind, p.state or p.country) for p in found] == [
        ("Fort Wayne", "city", "Indiana"),
        ("Paris", "city", "France"),
        ("UK", "country", "United Kingdom"),
        ("United States of America", "country", "United States"),
    ]  # "Nice" starts a sentence, "turkey" and "reading" are not capitalised


def test_an_ambiguous_name_is_every_place_of_that_name() -> None:
    countries = {place.country for place in mentions("We flew into Vancouver.")}
    assert countries == {"Canada", "United States"}


def test_which_places_answer_which_kind_of_question() -> None:
    (tampa,) = mentions("Tampa")
    (lyon,) = mentions("Lyon")
    (peru,) = mentions("Peru")
    (texas,) = mentions("Texas")
    assert fits(tampa, Ask("state")) and fits(texas, Ask("state"))
    assert not fits(lyon, Ask("state")) and not fits(peru, Ask("state"))
    assert fits(lyon, Ask("city")) and not fits(peru, Ask("city"))
    assert all(fits(p, Ask("country")) for p in (tampa, lyon, peru, texas))  # all in one
    assert fits(lyon, Ask("country", "EU")) and not fits(peru, Ask("country", "EU"))
    assert fits(tampa, Ask("city", us=True)) and not fits(lyon, Ask("city", us=True))
    assert names_place("Back from Lima at last", Ask("country", "SA"))
    assert not names_place("Back from the market at last", Ask("country"))


def test_the_table_holds_what_it_says() -> None:
    index = gazetteer()
    kinds = {place.kind for found in index.values() for place in found}
    assert kinds == {"country", "state", "city"}
    states = {p.name for found in index.values() for p in found if p.kind == "state"}
    assert len(states) >= 50 and "Minnesota" in states
    assert len(index) > 5_000


@pytest.mark.parametrize(
    "text",
    [
        "A" * 200_000,
        "Ab " * 70_000,
        "A" + " " * 200_000 + "b",
        "New York " * 25_000,
        ("Paris " + "\t" * 1_000) * 100,
        "'" * 200_000,
    ],
)
def test_long_hostile_text_is_read_in_one_pass(text: str) -> None:
    """Any message is read for places when a place question is asked: a text built to
    make the patterns backtrack must still be read once over (it would hang, not fail)."""
    found = mentions(text)
    assert isinstance(found, list)
