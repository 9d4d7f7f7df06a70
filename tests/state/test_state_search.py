"""Full-text search: finds what it should and never raises on user text."""

from __future__ import annotations

import pytest

from herald.state import SearchHit, StateStore

CORPUS = [
    ("user", "How do I compile C++ templates faster?"),
    ("assistant", "TODO: fix the flaky test in the parser"),
    ("user", "We met at the café near the harbour"),
    ("assistant", 'He said "NEAR(a b)" is FTS syntax, AND OR NOT are operators'),
    ("user", "我们的数据库查询很慢，需要优化"),
    ("assistant", "東京の天気は晴れです"),
    ("user", "prefix* and col:umn and ^caret"),
]

ADVERSARIAL = [
    "",
    "   ",
    '"',
    '"unbalanced',
    'say "hello',
    "'single'",
    "C++",
    "TODO: fix",
    "NEAR(",
    "NEAR(a b, 3)",
    "*",
    "pre*",
    "^start",
    "col:umn",
    "AND",
    "OR OR OR",
    "NOT",
    "a AND NOT b",
    "(",
    ")",
    "{a b}",
    "-minus",
    "+plus",
    "\\",
    "%_",
    "\x00",
    "DROP TABLE messages; --",
    "x" * 5000,
    "word " * 1000,
    "数据库",
    "東京",
    "🚀 emoji",
    "lone \ud800 surrogate",
    "\udfff数据",
]


@pytest.fixture
def filled(store: StateStore) -> tuple[StateStore, str, str]:
    sid = store.create_session()
    other = store.create_session()
    store.append_messages(sid, [{"role": role, "content": text} for role, text in CORPUS])
    store.append_message(other, {"role": "user", "content": "the flaky test again"})
    return store, sid, other


@pytest.mark.parametrize("query", ADVERSARIAL)
def test_adversarial_queries_never_raise(filled: tuple[StateStore, str, str], query: str) -> None:
    store, sid, _ = filled
    hits = store.search_messages(query)
    assert isinstance(hits, list)
    assert all(isinstance(hit, SearchHit) for hit in hits)
    assert isinstance(store.search_messages(query, session_id=sid, include_inactive=False), list)


def test_empty_and_symbol_only_queries_return_nothing(filled: tuple[StateStore, str, str]) -> None:
    store, _, _ = filled
    for query in ("", "   ", "*", '"', "()", "^", "--"):
        assert store.search_messages(query) == []


def contents(store: StateStore, hits: list[SearchHit]) -> list[str]:
    by_id = {
        m.id: m.content
        for s in store.list_sessions()
        for m in store.get_messages(s.id, include_inactive=True)
    }
    return [by_id[h.message_id] or "" for h in hits]


def test_operators_and_punctuation_are_plain_words(filled: tuple[StateStore, str, str]) -> None:
    store, _, _ = filled
    assert contents(store, store.search_messages("C++ templates")) == [CORPUS[0][1]]
    assert contents(store, store.search_messages("TODO: fix")) == [CORPUS[1][1]]
    assert contents(store, store.search_messages("NEAR(a b)")) == [CORPUS[3][1]]
    assert contents(store, store.search_messages("AND OR NOT")) == [CORPUS[3][1]]
    assert contents(store, store.search_messages("col:umn ^caret")) == [CORPUS[6][1]]
    # `*` is not a prefix operator: "pre*" is the word "pre", which no message has.
    assert store.search_messages("pre*") == []
    # All terms are required.
    assert store.search_messages("compile harbour") == []


def test_diacritics_and_case_are_folded(filled: tuple[StateStore, str, str]) -> None:
    store, _, _ = filled
    assert contents(store, store.search_messages("CAFE")) == [CORPUS[2][1]]
    assert contents(store, store.search_messages("café")) == [CORPUS[2][1]]


def test_cjk_words_inside_unspaced_text_are_found(filled: tuple[StateStore, str, str]) -> None:
    store, _, _ = filled
    [hit] = store.search_messages("数据库")
    assert contents(store, [hit]) == [CORPUS[4][1]]
    assert "«数据库»" in hit.snippet
    assert contents(store, store.search_messages("東京 天気")) == [CORPUS[5][1]]
    assert store.search_messages("数据库 harbour") == []


def test_hit_fields_ranking_and_filters(filled: tuple[StateStore, str, str]) -> None:
    store, sid, other = filled
    hits = store.search_messages("flaky test")
    assert {h.session_id for h in hits} == {sid, other}
    ranks = [h.rank for h in hits]
    assert ranks == sorted(ranks)
    hit = next(h for h in hits if h.session_id == sid)
    assert hit.role == "assistant"
    assert "«flaky»" in hit.snippet and "«test»" in hit.snippet
    assert hit.created_at > 0
    assert hit.id == hit.message_id
    assert [h.session_id for h in store.search_messages("flaky", session_id=other)] == [other]
    assert [h.session_id for h in store.search_messages("flaky", exclude_session_id=sid)] == [other]
    assert len(store.search_messages("flaky", limit=1)) == 1
    assert store.search_messages("flaky", limit=0) == []


def test_messages_without_content_are_skipped(store: StateStore) -> None:
    sid = store.create_session()
    store.append_message(
        sid,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
            ],
        },
    )
    assert store.search_messages("grep") == []
    assert store.search_messages("数据") == []
