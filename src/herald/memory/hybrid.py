"""Hybrid ranking of stored messages for `session_search`: words, meaning, time, names.

Candidates come from two sources:

- full text (FTS5 BM25): every term first, then any content word (with prefixes),
  so "What did Caroline research?" still finds a message with "caroline" and
  "researching" in it;
- vectors (`herald.memory.semantic`), when the embedding model is installed: the
  messages nearest in meaning, which share no word with the query at times. The names
  of the people who speak in the history (identities) are left out of the text
  embedded and of the any-word search (`people`): on LoCoMo, keeping them made vectors
  pull in every message that merely addresses that person; any other name (a player,
  a game, a city) stays, being what the question is about. When the
  query names a time span ("on 25 May, 2022"), the nearest messages from inside it
  join too, however far down the whole window's order they are (on LoCoMo, temporal
  questions' hit@10 0.771 -> 0.804 with the tool alone).

Every candidate is then scored on both: its BM25 as a share of the best one's in its
stage (a message with every word above any with some), plus its cosine similarity
as a share of the best candidate's above VECTOR_FLOOR, weighted VECTOR_WEIGHT. The
scores themselves are summed, not their ranks: a close second by meaning stays close,
where reciprocal ranks put it as far below as a distant one (on LoCoMo, rank fusion
scored hit@5 0.63 and this 0.70 in the same set-up).

Then the query's own hints lift what they point at: a time span it names ("last
summer", "in May", "on 9 November, 2022") lifts messages from that span; a name it
mentions lifts messages that contain it, and lifts more those *said* by the identity
of that name (on LoCoMo, most questions about a person are answered by that person's
own words); a kind of place it asks for ("which countries", "what state":
`herald.memory.places`) lifts messages naming such a place, and brings in the nearest
by meaning that name one. Last, each message gets a small share of its session's
weight among the best candidates: an event talked about over several messages of one
session is more likely the one asked about than a stray mention. And a question among
the best candidates lends REPLY_SHARE of its score before the hints to its reply, the
message said next by someone else in the same place (its session, or the group chat's
other sessions), the hints then applied as they fit the reply: the question holds the
query's words, the reply the answer.

Ties are broken the same way every time: more sources first, then the better best
single-source rank, then the newer message.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import herald.memory.places as places
import herald.memory.query_parse as query_parse
import herald.memory.semantic as semantic
from herald.memory.holographic.text import stem

FTS_WEIGHT = 1.0
VECTOR_WEIGHT = 1.5
VECTOR_FLOOR = 0.1  # cosine similarity at which meaning adds nothing
STRICT_BONUS = 0.2  # a message with every word of the query sits above the any-word ones
TIME_BOOST = 1.0  # fraction added for a message inside the span the query names
NAME_BOOST = 0.15  # fraction added per name the message holds or was said by
SPEAKER_BOOST = 1.0  # fraction added again when the named identity said it
SESSION_SHARE = 0.05  # the most a session's other strong candidates add to a message
SESSION_DEPTH = 30  # the best this many candidates make up the sessions' weights
REPLY_SHARE = 0.7  # of a matching question's own score, given to the reply to it
REPLY_DEPTH = 20  # the best this many candidates are looked at for questions
FETCH = 50  # candidates per source
SPAN_FETCH = 20  # candidates by meaning from inside the time span the query names
PLACE_BOOST = 0.5  # fraction added for a message naming a place of the kind asked for
PLACE_POOL = 300  # the nearest this many by meaning are looked at for places
PLACE_FETCH = 20  # of those, the nearest this many naming such a place join
SNIPPET_CHARS = 300


@dataclass
class RankedHit:
    """A message found, with what found it. `rank` sorts ascending (best first), like
    the store's full-text hits, so callers can treat both alike."""

    message_id: int
    session_id: str
    role: str
    snippet: str
    created_at: float
    active: bool
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)  # source -> 0-based rank there
    strict: bool = False  # matched every word of the query

    @property
    def rank(self) -> float:
        return -self.score

    def sort_key(self) -> tuple[float, int, int, int]:
        best = min(self.ranks.values()) if self.ranks else 1 << 30
        return (-self.score, -len(self.ranks), best, -self.message_id)


def order(hits: list[RankedHit]) -> list[RankedHit]:
    """Best first: score, then more sources, then best single rank, then newest."""
    return sorted(hits, key=RankedHit.sort_key)


def _contains_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}", text, re.IGNORECASE) is not None


def people(store: Any, query: str) -> set[str]:
    """The names in `query` (lower-cased) that are identities speaking in the history.
    Their names are everywhere in their chats ("Wow, Caroline!"), whatever a message is
    about, so the name boost weighs them instead of the words and the meaning. A name
    nobody speaks under ("LeBron", "Picasso") is what the query is about, and stays."""
    named = [name.lower() for name in query_parse.names(query)]
    return store.identities_among(named) if named else set()


def _is_person(word: str, speakers: Collection[str]) -> bool:
    return word.strip("?!.,:;'\"").removesuffix("'s").lower() in speakers


def meaning_query(query: str, speakers: Collection[str]) -> str:
    """The query as the embedding model sees it: without the names of `speakers` (see
    `people`): a sentence model pulls those towards any message that addresses that
    person, whatever it is about (on LoCoMo, dropping every name instead of only the
    speakers' lost hit@10 0.842 -> 0.823)."""
    kept = [word for word in query.split() if not _is_person(word, speakers)]
    return " ".join(kept) or query


def relaxed_terms(query: str, speakers: Collection[str]) -> list[str]:
    """The words the any-word search looks for: content words, cut to their stems
    ("visited" -> "visit", which matches "visiting" as a prefix), and without the
    names of `speakers` when other words are left (the name boost weighs those)."""
    terms = query_parse.content_terms(query)
    terms = [term for term in terms if term not in speakers] or terms
    return list(dict.fromkeys(stem(term) for term in terms))


@dataclass(frozen=True)
class Hints:
    """What the query points at beyond its words: a time span, names, a kind of place."""

    span: query_parse.TimeSpan | None = None
    names: tuple[str, ...] = ()
    place: places.Ask | None = None

    def __bool__(self) -> bool:
        return self.span is not None or bool(self.names) or self.place is not None


def boost_factor(row: Any, hints: Hints) -> float:
    """How much `row` is lifted by the query's hints (see the module docstring)."""
    span, names = hints.span, hints.names
    factor = 1.0
    if span is not None and span.contains(float(row["created_at"])):
        factor += TIME_BOOST
    content = row["content"] or ""
    identity = str(row["identity"] or "").lower()
    for name in names:
        said = name.lower() == identity
        if said or _contains_word(content, name):
            factor *= 1.0 + NAME_BOOST
        if said:
            factor *= 1.0 + SPEAKER_BOOST
    if hints.place is not None and places.names_place(content, hints.place):
        factor *= 1.0 + PLACE_BOOST
    return factor


def share_sessions(hits: list[RankedHit]) -> None:
    """Add to each hit up to SESSION_SHARE, in proportion to its session's weight among
    the best SESSION_DEPTH hits (the heaviest session's hits get all of it)."""
    weights: dict[str, float] = {}
    for hit in order(hits)[:SESSION_DEPTH]:
        weights[hit.session_id] = weights.get(hit.session_id, 0.0) + hit.score
    heaviest = max(weights.values(), default=0.0)
    if heaviest <= 0.0:
        return
    for hit in hits:
        hit.score += SESSION_SHARE * weights.get(hit.session_id, 0.0) / heaviest


def _text_scores(found: list[Any], strict_ids: set[int]) -> dict[int, float]:
    """Each full-text hit's score: its bm25 as a share of its stage's best (a stage
    listed newest first, with no bm25, scores by place), strict hits above the rest."""
    out: dict[int, float] = {}
    for strict in (True, False):
        stage = [hit for hit in found if (hit.message_id in strict_ids) == strict]
        best = min((hit.rank for hit in stage), default=0.0)
        for place, hit in enumerate(stage):
            share = hit.rank / best if best < 0.0 else 1.0 / (1.0 + place / 10.0)
            out[hit.message_id] = (1.0 + STRICT_BONUS * share) if strict else share
    return out


def rank_messages(
    store: Any,
    query: str,
    *,
    limit: int,
    identity: str | None = None,
    session_id: str | None = None,
    exclude_session_id: str | None = None,
    use_vectors: bool = True,
    clock: Callable[[], float] = time.time,
) -> list[RankedHit]:
    """Up to `limit` messages for `query`, best first. Never raises for any query text."""
    hits: dict[int, RankedHit] = {}
    strict = store.search_messages(
        query,
        limit=FETCH,
        session_id=session_id,
        exclude_session_id=exclude_session_id,
        identity=identity,
    )
    words = list(strict)
    speakers = people(store, query)
    if len(words) < FETCH and session_id is None:
        terms = relaxed_terms(query, speakers)
        words += store.search_messages_relaxed(
            " ".join(terms) if terms else query,
            limit=FETCH - len(words),
            exclude_session_id=exclude_session_id,
            exclude_ids=[hit.message_id for hit in strict],
            identity=identity,
        )
    strict_ids = {hit.message_id for hit in strict}
    text_scores = _text_scores(words, strict_ids)
    position, previous = 0, None
    for index, found in enumerate(words):
        stage = (found.message_id in strict_ids, found.rank)
        if stage != previous:  # equal bm25 in one stage: equal rank (the tie-break decides)
            position, previous = index, stage
        hit = RankedHit(
            message_id=found.message_id,
            session_id=found.session_id,
            role=found.role,
            snippet=found.snippet,
            created_at=found.created_at,
            active=bool(found.active),
            score=FTS_WEIGHT * text_scores[found.message_id],
            ranks={"fts": position},
            strict=found.message_id in strict_ids,
        )
        hits.setdefault(hit.message_id, hit)

    hints = Hints(
        query_parse.time_span(query, clock()),
        tuple(query_parse.names(query)),
        places.asked(query, speakers),
    )
    if use_vectors and semantic.available():
        meaning = meaning_query(query, speakers)
        _add_meaning(store, meaning, hits, identity, session_id, exclude_session_id, hints)

    if not hits:
        return []
    rows = {row["id"]: row for row in store.candidate_rows(list(hits))}
    plain = {hit.message_id: hit.score for hit in hits.values()}
    if hints:
        for hit in hits.values():
            if hit.message_id in rows:
                hit.score *= boost_factor(rows[hit.message_id], hints)
    share_sessions(list(hits.values()))
    lift_replies(store, hits, rows, identity, session_id, exclude_session_id, plain, hints)
    return order(list(hits.values()))[:limit]


def _hit_from_row(row: Any) -> RankedHit:
    """A candidate found by other means than full text, its snippet cut from the row."""
    return RankedHit(
        message_id=row["id"],
        session_id=row["session_id"],
        role=row["role"],
        snippet=(row["content"] or "")[:SNIPPET_CHARS],
        created_at=float(row["created_at"]),
        active=bool(row["active"]),
    )


def lift_replies(
    store: Any,
    hits: dict[int, RankedHit],
    rows: dict[int, Any],
    identity: str | None,
    session_id: str | None,
    exclude_session_id: str | None,
    plain: dict[int, float],
    hints: Hints,
) -> None:
    """A question among the best candidates gives REPLY_SHARE of its score to the
    message said next by someone else in the same place (`StateStore.replies`): "what
    are you researching?" matches the words, "adoption agencies" holds the answer.
    `rows`: the candidates' rows, already read for the boosts.

    The share is of the question's `plain` score (before the hints), lifted by the
    hints as they apply to the *reply*: a question by the person the query names says
    nothing of the other person's answer ("What did Nate do in April?": Nate's "any
    trips coming up?" lifted Joanna's reply above Nate's own news; on LoCoMo this
    moved hit@10 0.839 -> 0.844 with the share kept at 0.5, and 0.845 at 0.7)."""
    best = order(list(hits.values()))[:REPLY_DEPTH]
    questions = [
        hit
        for hit in best
        if hit.message_id in rows and "?" in (rows[hit.message_id]["content"] or "")[-300:]
    ]
    if not questions:
        return
    answers = store.replies([q.message_id for q in questions], identity=identity)
    fresh = [answer for answer in answers.values() if answer not in hits]
    new_rows = {row["id"]: row for row in store.candidate_rows(fresh)}
    for position, question in enumerate(questions):
        answer = answers.get(question.message_id)
        hit = hits.get(answer) if answer is not None else None
        if answer is not None and hit is None:
            row = new_rows.get(answer)
            if row is None or (identity is not None and row["identity"] != identity):
                continue  # checked again on the row itself (invariant 19)
            if row["session_id"] == exclude_session_id or session_id not in (
                None,
                row["session_id"],
            ):
                continue  # the search's own bounds hold for replies too
            hit = hits[answer] = _hit_from_row(row)
        if hit is not None:
            hit.ranks.setdefault("reply", position)
            score = plain[question.message_id]
            row = rows.get(answer) or new_rows.get(answer)
            if hints and row is not None:
                score *= boost_factor(row, hints)
            hit.score += REPLY_SHARE * score


def _add_meaning(
    store: Any,
    meaning: str,
    hits: dict[int, RankedHit],
    identity: str | None,
    session_id: str | None,
    exclude_session_id: str | None,
    hints: Hints,
) -> None:
    """The messages nearest `meaning` (the query as `meaning_query` has it) join
    `hits`, and every hit's score gains its similarity (see the module docstring).
    When the query names a time span, the nearest messages from that span join too,
    however far from the query they are ("what did Nate do for Joanna on 25 May?": the
    answer shares no word); when it asks for a kind of place, the nearest that name
    one (`_nearest_naming_places`)."""
    semantic.index_for_search(store)
    vector = semantic.embed_query(meaning)
    if vector is None:
        return
    bounds = {"identity": identity, "session_id": session_id}
    near = semantic.nearest(
        store, vector, limit=FETCH, exclude_session_id=exclude_session_id, **bounds
    )
    span = hints.span
    if span is not None:
        seen = {found.message_id for found in near}
        near += [
            found
            for found in semantic.nearest(
                store, vector, limit=SPAN_FETCH, exclude_session_id=exclude_session_id,
                span=(span.start, span.end), floor=VECTOR_FLOOR, **bounds,
            )
            if found.message_id not in seen
        ]  # fmt: skip
    if hints.place is not None:
        near += _nearest_naming_places(store, vector, near, hints.place, exclude_session_id, bounds)
    rows = {row["id"]: row for row in store.candidate_rows([n.message_id for n in near])}
    for position, found in enumerate(near):
        row = rows.get(found.message_id)
        if row is None or (identity is not None and row["identity"] != identity):
            continue  # checked again on the row itself (invariant 19)
        hit = hits.get(found.message_id)
        if hit is None:
            hit = hits[found.message_id] = _hit_from_row(row)
        hit.ranks["vector"] = position
    similar = semantic.similarities(store, vector, list(hits), identity)
    best = max(similar.values(), default=0.0)
    if best <= VECTOR_FLOOR:
        return
    for message_id, similarity in similar.items():
        share = max(0.0, (similarity - VECTOR_FLOOR) / (best - VECTOR_FLOOR))
        hits[message_id].score += VECTOR_WEIGHT * share


def _nearest_naming_places(
    store: Any,
    vector: Any,
    near: list[semantic.VectorHit],
    place: places.Ask,
    exclude_session_id: str | None,
    bounds: dict[str, str | None],
) -> list[semantic.VectorHit]:
    """Of the PLACE_POOL messages nearest in meaning, the first PLACE_FETCH not in
    `near` that name a place of the kind `place` asks for: "What state did Nate
    visit?" is answered by "I took my turtles to the beach in Tampa", which neither
    the words nor the meaning put near the top (a sentence model does not know Tampa
    is in Florida; the gazetteer does). No floor on the meaning here: in a small
    history the one message naming a place can sit below any (found using the REPL: the
    owner's "the beach in Tampa" scored under 0.1 with its neighbours, and the search
    came back empty)."""
    seen = {found.message_id for found in near}
    pool = [
        found
        for found in semantic.nearest(
            store, vector, limit=PLACE_POOL, exclude_session_id=exclude_session_id,
            floor=-1.0, **bounds,
        )
        if found.message_id not in seen
    ]  # fmt: skip
    rows = {row["id"]: row for row in store.candidate_rows([found.message_id for found in pool])}
    naming = [
        found
        for found in pool
        if found.message_id in rows
        and places.names_place(rows[found.message_id]["content"] or "", place)
    ]
    return naming[:PLACE_FETCH]
