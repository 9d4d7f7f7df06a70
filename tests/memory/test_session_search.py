"""The `session_search` tool over a real state.db: the four shapes, lineage
de-duplication, exclusion of the current session, bounds, and adversarial queries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from memory_support import call, call_raw, home_settings, tool_context

from herald.state import StateStore


@dataclass
class World:
    store: StateStore
    ctx: object
    deploy: str
    cpp: str
    todo: str
    names: str
    sql: str
    cjk: str
    emoji: str
    parent: str
    child: str
    archived: str
    current: str
    archived_ids: list[int]


def _seed(store: StateStore, texts: list[str], **session: object) -> str:
    sid = store.create_session(**session)
    roles = ["user", "assistant"]
    store.append_messages(sid, [{"role": roles[i % 2], "content": t} for i, t in enumerate(texts)])
    return sid


def build_world(root: Path) -> World:
    settings = home_settings(root)
    store = StateStore(settings.home.state_db)
    deploy = _seed(
        store,
        [
            "How do we deploy the billing service?",
            "Run the release pipeline in Buildkite, then watch the canary for ten minutes.",
            "What if the canary fails?",
            "Roll back with the previous image tag.",
        ],
        title="Billing deploys",
    )
    cpp = _seed(store, ["How do I compile C++ templates faster?", "Use precompiled headers."])
    todo = _seed(store, ["TODO: fix the flaky parser test", "I will quarantine it first."])
    names = _seed(store, ["The foo-bar package imports the a.b.c module", "Noted."])
    sql = _seed(
        store, ["The logs showed '; DROP TABLE messages; -- in a form field", "Parameterized."]
    )
    cjk = _seed(store, ["我们需要规划数据库迁移的时间表", "好的，我来准备。"])
    emoji = _seed(store, ["party time 🎉 the launch is done", "Congratulations!"])
    parent = _seed(store, ["Plan the kubernetes upgrade to 1.30", "Drain nodes one at a time."])
    child = _seed(
        store,
        ["Plan the kubernetes upgrade to 1.30", "Continue: the upgrade is half done."],
        parent_id=parent,
    )
    archived = store.create_session(title="Compressed one")
    old = store.append_messages(
        archived,
        [
            {"role": "user", "content": "The vault unseal keys are split between Ann and Bo"},
            {"role": "assistant", "content": "Understood, two key holders."},
            {"role": "user", "content": "And the recovery codes are in the safe"},
            {"role": "assistant", "content": "Noted the safe."},
        ],
    )
    store.append_messages(archived, [{"role": "user", "content": "Later question"}])
    store.archive_and_compact(
        archived, [m.id for m in old], [{"role": "user", "content": "Summary: vault key holders"}]
    )
    current = _seed(
        store, ["We are talking about the kubernetes upgrade and billing deploys right now"]
    )
    ctx = tool_context(settings, store=store, session_id=current)
    return World(
        store, ctx, deploy, cpp, todo, names, sql, cjk, emoji, parent, child, archived,
        current, [m.id for m in old],
    )  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Shared by the tests that only read (seeding costs a few fsyncs per session)."""
    built = build_world(tmp_path_factory.mktemp("search"))
    yield built
    built.store.close()


@pytest.fixture
def fresh_world(tmp_path: Path) -> Iterator[World]:
    """For tests that add sessions."""
    built = build_world(tmp_path)
    yield built
    built.store.close()


def search(world: World, **arguments: object) -> dict:
    return call("session_search", world.ctx, **arguments)


def sessions_in(result: dict) -> list[str]:
    return [r["session_id"] for r in result["results"]]


# -- discovery ---------------------------------------------------------------------------------


def test_discovery_finds_the_conversation_and_expands_the_best_hit(world):
    result = search(world, query="deploy billing")
    assert result["mode"] == "search"
    best = result["results"][0]
    assert best["session_id"] == world.deploy
    assert best["title"] == "Billing deploys"
    assert best["match"]["role"] == "user" and "«deploy»" in best["match"]["snippet"]
    context = best["context"]
    assert [m["role"] for m in context][:2] == ["user", "assistant"]
    assert next(m for m in context if m.get("match"))["id"] == best["match"]["id"]
    for message in context:
        assert {"id", "role", "created_at", "content"} <= set(message)
        assert message["created_at"].endswith("Z")
    assert any("Buildkite" in m["content"] for m in context)  # real stored neighbours
    assert all("context" not in r for r in result["results"][1:])


def test_lineage_is_one_conversation_shown_by_its_newest_session(world):
    result = search(world, query="kubernetes upgrade")
    lineage = {world.parent, world.child}
    found = [r for r in result["results"] if r["session_id"] in lineage]
    assert len(found) == 1  # parent and child are one conversation
    assert found[0]["session_id"] == world.child  # identical hits: the newest session wins
    assert found[0]["matching_messages"] >= 2
    assert found[0]["parent_id"] == world.parent


def test_the_current_session_is_excluded(world):
    for query in ("kubernetes upgrade", "billing deploys right now", "talking"):
        result = search(world, query=query)
        assert world.current not in sessions_in(result)
    browse = search(world)
    assert world.current not in [s["session_id"] for s in browse["sessions"]]
    refused = call_raw("session_search", world.ctx, session_id=world.current)
    assert refused.is_error and "current session" in refused.content


def test_archived_messages_are_found_and_shown_in_their_original_neighbourhood(world):
    result = search(world, query="unseal keys")
    [hit] = [r for r in result["results"] if r["session_id"] == world.archived]
    assert hit["match"]["archived"] is True
    assert [m["id"] for m in hit["context"]][:4] == world.archived_ids
    assert all(m.get("archived") for m in hit["context"][:4])


def test_looser_matches_fill_in_and_are_marked_partial(world):
    strict = search(world, query="deploy billing")
    assert strict["results"][0]["session_id"] == world.deploy
    assert "partial_match" not in strict["results"][0]
    loose = search(world, query="canary templates zebra")  # no message has all three
    found = {r["session_id"]: r for r in loose["results"]}
    assert {world.deploy, world.cpp} <= set(found)
    assert all(r["partial_match"] for r in found.values())


def test_nothing_found_says_what_to_do(world):
    result = search(world, query="zebra quokka narwhal")
    assert result["results"] == [] and "browse recent conversations" in result["note"]


def test_query_with_session_id_searches_that_session_only(world):
    result = search(world, query="canary", session_id=world.deploy)
    assert sessions_in(result) == [world.deploy]
    assert search(world, query="canary", session_id=world.cpp)["results"] == []


# -- scroll, read, browse ------------------------------------------------------------------------


def test_scroll_a_window_around_a_message(world):
    messages = world.store.get_messages(world.deploy)
    anchor = messages[2].id
    result = search(world, session_id=world.deploy, around_message_id=anchor, limit=3)
    assert result["mode"] == "scroll"
    assert [m["id"] for m in result["messages"]] == [m.id for m in messages[1:4]]
    assert next(m for m in result["messages"] if m.get("match"))["id"] == anchor
    assert result["session"]["session_id"] == world.deploy
    assert f"around_message_id={messages[1].id}" in result["note"]
    # the anchor alone is enough: its session is looked up
    alone = search(world, around_message_id=anchor, limit=3)
    assert [m["id"] for m in alone["messages"]] == [m.id for m in messages[1:4]]


def test_scroll_errors_are_explained(world):
    other = world.store.get_messages(world.cpp)[0].id
    wrong = call_raw("session_search", world.ctx, session_id=world.deploy, around_message_id=other)
    assert wrong.is_error and "use a message id from that session" in wrong.content
    missing = call_raw("session_search", world.ctx, around_message_id=999_999)
    assert missing.is_error and "no message 999999" in missing.content
    bad = call_raw("session_search", world.ctx, around_message_id="soon")
    assert bad.is_error
    unknown = call_raw("session_search", world.ctx, session_id="19990101")
    assert unknown.is_error and "no session id starts with" in unknown.content


def test_read_a_session_by_id_or_prefix(world):
    result = search(world, session_id=world.deploy)
    assert result["mode"] == "read"
    assert result["messages"][0]["content"] == "How do we deploy the billing service?"
    assert len(result["messages"]) == 4 and "omitted" not in result
    prefix = world.deploy[: len(world.deploy) - 1]
    try:
        by_prefix = search(world, session_id=prefix)
    except AssertionError:  # another session shares the prefix: that is an explained error
        return
    assert by_prefix["session"]["session_id"] == world.deploy


def test_reading_a_long_session_shows_head_and_tail_with_a_note(fresh_world):
    world = fresh_world
    sid = _seed(world.store, [f"step {n} of the long task" for n in range(100)])
    result = search(world, session_id=sid, limit=10)
    contents = [m["content"] for m in result["messages"]]
    assert contents[:5] == [f"step {n} of the long task" for n in range(5)]
    assert contents[5:] == [f"step {n} of the long task" for n in range(95, 100)]
    assert result["omitted"]["count"] == 90
    assert "90 message(s) in the middle are not shown" in result["note"]


def test_reading_a_compressed_session_mentions_the_archived_rows(world):
    result = search(world, session_id=world.archived)
    assert [m["content"] for m in result["messages"]] == [
        "Summary: vault key holders",
        "Later question",
    ]
    assert "4 older message(s) were compressed" in result["note"]


def test_browse_lists_recent_conversations(world):
    result = search(world, limit=50)
    assert result["mode"] == "browse"
    rows = {row["session_id"]: row for row in result["sessions"]}
    assert world.child in rows and world.parent not in rows  # one row per lineage
    assert rows[world.child]["sessions_in_conversation"] == 2
    deploy = rows[world.deploy]
    assert deploy["title"] == "Billing deploys" and deploy["messages"] == 4
    assert rows[world.cpp]["title"] == "How do I compile C++ templates faster?"  # preview
    assert deploy["started_at"].endswith("Z")
    first = result["sessions"][0]["session_id"]
    assert first == world.archived  # most recently updated first
    assert len(search(world, limit=2)["sessions"]) == 2


# -- bounds ----------------------------------------------------------------------------------------


def test_results_are_bounded_per_message_and_in_total(fresh_world):
    world = fresh_world
    huge = "lorem ipsum dolor " * 1_200  # 21,600 chars
    sid = _seed(world.store, [f"giant {n} " + huge for n in range(24)])
    read = call_raw("session_search", world.ctx, session_id=sid, limit=200)
    assert not read.is_error
    assert len(read.content) <= 20_000
    data = json.loads(read.content)
    assert all("more chars not shown" in m["content"] for m in data["messages"])
    assert len(data["messages"]) < 24 and "not shown to keep this result small" in data["note"]
    found = call_raw("session_search", world.ctx, query="giant lorem", limit=20)
    assert not found.is_error and len(found.content) <= 20_000
    browse = call_raw("session_search", world.ctx, limit=10_000)
    assert not browse.is_error and len(json.loads(browse.content)["sessions"]) <= 50


@pytest.mark.parametrize("limit", [0, -5, "many", None, 10**30, 2.7])
def test_odd_limits_are_clamped_not_errors(world, limit):
    assert not call_raw("session_search", world.ctx, query="canary", limit=limit).is_error


def test_the_schema_comes_from_the_signature():
    from herald.memory.session_search import session_search

    params = session_search.definition()["function"]["parameters"]
    assert "required" not in params  # every argument is optional: none lists sessions
    props = params["properties"]
    assert list(props) == ["query", "session_id", "around_message_id", "limit"]
    assert props["around_message_id"]["type"] == "integer"
    assert props["limit"]["type"] == "integer"
    assert props["session_id"] == {
        "type": "string",
        "description": "a session id (or unique prefix)",
    }


def test_wrong_argument_types_are_named(world):
    bad = call_raw("session_search", world.ctx, around_message_id="soon")
    assert bad.is_error and "around_message_id must be an integer, got 'soon'" in bad.content
    bad = call_raw("session_search", world.ctx, query=["deploy"])
    assert bad.is_error and "query must be a string, got a list" in bad.content
    bad = call_raw("session_search", world.ctx, sessions=3)
    assert bad.is_error and "'sessions' is not an argument of session_search" in bad.content
    # empty strings still mean "not given": this browses
    assert search(world, query="", session_id="", around_message_id="")["mode"] == "browse"


def test_without_a_store_the_tool_explains(tmp_path):
    ctx = tool_context(home_settings(tmp_path))
    result = call_raw("session_search", ctx, query="anything")
    assert result.is_error and "no session store" in result.content


# -- adversarial queries ---------------------------------------------------------------------------

ADVERSARIAL = [
    # (query, the session it should find, or None when any answer is fine)
    ('"deploy"', "deploy"),
    ('"unbalanced quote', None),
    ("'single quoted'", None),
    ("deploy AND billing", "deploy"),
    ("canary OR nothing", "deploy"),
    ("NOT canary", "deploy"),
    ("NEAR(canary release)", "deploy"),
    ("canary*", "deploy"),
    ("*", None),
    ("^canary", "deploy"),
    ("content:canary", None),
    ("C++", "cpp"),
    ("C++ templates", "cpp"),
    ("TODO: fix", "todo"),
    ("foo-bar", "names"),
    ("a.b.c", "names"),
    ("'; DROP TABLE messages; --", "sql"),
    ("数据库迁移", "cjk"),
    ("规划数据库的迁移", "cjk"),  # not verbatim in the text: the trigram fallback
    ("🎉", None),
    ("🎉 launch", "emoji"),
    ("(((", None),
    ("{canary}", "deploy"),
    ("\\", None),
    ("%", None),
    ("_", None),
    ("\x00canary", "deploy"),
    ("\ud800 lone surrogate", None),
]


@pytest.mark.parametrize(("query", "expected"), ADVERSARIAL)
def test_adversarial_queries_never_raise_and_find_sensible_matches(world, query, expected):
    result = call_raw("session_search", world.ctx, query=query)
    assert not result.is_error, result.content
    data = json.loads(result.content)
    assert data["mode"] == "search"
    if expected is not None:
        assert getattr(world, expected) in sessions_in(data), (query, data)
    assert world.current not in sessions_in(data)
    assert world.store.count_messages(world.sql) == 2  # the table is fine


def test_a_very_long_query_still_finds_the_conversation(world):
    query = "how did we deploy billing " + "with lots of pasted context words " * 170
    assert len(query) > 5_000
    data = search(world, query=query)
    assert world.deploy in sessions_in(data)
    assert len(data["query"]) < 300  # echoed back shortened
    single = "x" * 5_000
    assert search(world, query=single)["results"] == []


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_a_blank_query_browses(world, query):
    assert search(world, query=query)["mode"] == "browse"
