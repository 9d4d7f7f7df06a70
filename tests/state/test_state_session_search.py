"""The state queries behind session search: message windows (active and archived),
session slices, lineages, recent sessions and the relaxed (any-term, trigram) search."""

from __future__ import annotations

import pytest

from herald.state import StateError, StateStore


def seed(store: StateStore, sid: str, texts: list[str]) -> list[int]:
    roles = ["user", "assistant"]
    stored = store.append_messages(
        sid, [{"role": roles[i % 2], "content": text} for i, text in enumerate(texts)]
    )
    return [m.id for m in stored]


# -- windows ---------------------------------------------------------------------------------


def test_window_around_an_active_message(store):
    sid = store.create_session()
    ids = seed(store, sid, [f"message {n}" for n in range(10)])
    window = store.get_message_window(sid, ids[5], before=2, after=2)
    assert [m.id for m in window] == ids[3:8]
    assert [m.id for m in store.get_message_window(sid, ids[0], before=3, after=1)] == ids[:2]
    assert [m.id for m in store.get_message_window(sid, ids[9], before=1, after=5)] == ids[8:]
    assert [m.id for m in store.get_message_window(sid, ids[4], before=0, after=0)] == [ids[4]]


def test_a_message_of_another_session_is_refused(store):
    a, b = store.create_session(), store.create_session()
    [mine] = seed(store, a, ["mine"])
    seed(store, b, ["theirs"])
    with pytest.raises(StateError, match="has no message"):
        store.get_message_window(b, mine)
    with pytest.raises(StateError, match="has no message"):
        store.get_message_window(a, 10_000)


def test_archived_anchor_shows_its_archived_neighbourhood(store):
    sid = store.create_session()
    ids = seed(store, sid, [f"message {n}" for n in range(8)])
    [summary] = store.archive_and_compact(
        sid, ids[1:5], [{"role": "user", "content": "summary of messages 1-4"}]
    )
    # anchored on an archived row: the original conversation around it, archived rows included
    window = store.get_message_window(sid, ids[2], before=2, after=2)
    assert [m.id for m in window] == ids[0:5]
    assert [m.active for m in window] == [True, False, False, False, False]
    # anchored on an active row: the live view, where the summary stands in for the span
    live = store.get_message_window(sid, ids[5], before=2, after=1)
    assert [m.id for m in live] == [ids[0], summary.id, ids[5], ids[6]]


# -- slices ----------------------------------------------------------------------------------


def test_session_slice_head_tail_and_counts(store):
    sid = store.create_session()
    ids = seed(store, sid, [f"m{n}" for n in range(30)])
    part = store.get_session_slice(sid, head=4, tail=3)
    assert [m.id for m in part.head] == ids[:4]
    assert [m.id for m in part.tail] == ids[-3:]
    assert part.total == 30 and part.omitted == 23 and part.archived == 0
    small = store.get_session_slice(sid, head=20, tail=20)
    assert [m.id for m in small.head] == ids and small.tail == () and small.omitted == 0
    store.archive_and_compact(sid, ids[:10], [{"role": "user", "content": "summary"}])
    after = store.get_session_slice(sid, head=2, tail=2)
    assert after.total == 21 and after.archived == 10
    assert after.head[0].content == "summary"


# -- lineage ---------------------------------------------------------------------------------


def test_lineages_group_parent_chains(store):
    root = store.create_session(title="root")
    child = store.create_session(parent_id=root)
    grandchild = store.create_session(parent_id=child)
    sibling = store.create_session(parent_id=root)
    alone = store.create_session()
    found = store.session_lineages([grandchild, alone, root, "no-such-session"])
    assert set(found) == {grandchild, alone, root}
    family = found[grandchild]
    assert family == found[root]
    assert family.root_id == root
    assert set(family.session_ids) == {root, child, grandchild, sibling}
    assert family.session_ids[0] == root and family.latest_id == sibling  # created last
    assert found[alone].session_ids == (alone,) and found[alone].latest_id == alone
    assert store.session_lineages([]) == {}


# -- recent sessions -------------------------------------------------------------------------


def test_recent_sessions_newest_first_with_counts_and_previews(store):
    old = store.create_session(title="old one")
    seed(store, old, ["first question in old", "answer"])
    empty = store.create_session()
    new = store.create_session()
    seed(store, new, ["what is the staging URL?", "it is staging.example", "thanks"])
    current = store.create_session()
    seed(store, current, ["the session we are in"])

    recent = store.recent_sessions(limit=10, exclude=[current])
    assert [s.session.id for s in recent] == [new, old]  # no empty, no excluded
    assert recent[0].message_count == 3 and recent[0].archived_count == 0
    assert recent[0].first_user_message == "what is the staging URL?"
    assert recent[1].session.title == "old one"
    assert empty not in [s.session.id for s in store.recent_sessions(limit=10)]
    assert len(store.recent_sessions(limit=1)) == 1
    [summary] = store.summarize_sessions([old])
    assert summary.message_count == 2 and summary.first_user_message == "first question in old"


# -- relaxed search ----------------------------------------------------------------------------


@pytest.fixture
def corpus(store):
    sid = store.create_session()
    ids = seed(
        store,
        sid,
        [
            "We finished the migration to Postgres 16 last week",
            "The deploy pipeline uses Buildkite",
            "我们完成了数据库的迁移工作",
            "数据库迁移计划已经批准",
            "東京の天気は晴れです",
        ],
    )
    return sid, ids


def test_any_term_finds_rows_when_not_every_term_matches(store, corpus):
    _, ids = corpus
    query = "postgres buildkite kubernetes"
    assert store.search_messages(query) == []  # strict: every term
    found = {h.message_id for h in store.search_messages_relaxed(query)}
    assert found == {ids[0], ids[1]}


def test_long_words_also_match_as_prefixes(store, corpus):
    _, ids = corpus
    assert store.search_messages("migrat") == []
    assert [h.message_id for h in store.search_messages_relaxed("migrat")] == [ids[0]]


def test_trigrams_find_cjk_text_written_differently(store, corpus):
    _, ids = corpus
    assert [h.message_id for h in store.search_messages("数据库迁移")] == [ids[3]]  # exact
    relaxed = store.search_messages_relaxed("数据库迁移", exclude_ids=[ids[3]])
    assert [h.message_id for h in relaxed] == [ids[2]]  # 数据库的迁移: shares 数据库
    assert "«数据库»" in relaxed[0].snippet
    assert store.search_messages_relaxed("东京天气") == []  # simplified ≠ Japanese kanji here


def test_relaxed_search_honours_exclusions(store, corpus):
    sid, ids = corpus
    assert store.search_messages_relaxed("postgres", exclude_session_id=sid) == []
    assert (
        store.search_messages_relaxed("postgres buildkite", exclude_ids=[ids[0]])[0].message_id
        == ids[1]
    )
    assert store.search_messages_relaxed("postgres", limit=0) == []


@pytest.mark.parametrize(
    "query",
    ['"', "C++", "TODO: fix", "NEAR(a b)", "*", "^", "col:umn", "'; DROP TABLE messages; --",
     "a" * 5000, "数据库迁移 AND OR", "🙂🙂", "\ud800 lone surrogate", "%_\\", ""],
)  # fmt: skip
def test_relaxed_search_never_raises(store, corpus, query):
    store.search_messages_relaxed(query)
    assert store.count_messages(corpus[0]) == 5
