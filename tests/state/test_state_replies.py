"""`StateStore.replies`: the message said next by someone else in the same place, which
session_search lifts when a question matches (herald.memory.hybrid.lift_replies)."""

from __future__ import annotations

import pytest

import herald.state.store as store_module
from herald.engine.session import META_CHAT
from herald.state import StateStore
from herald.state.history import CHAT_META_KEY


def _said(store: StateStore, sid: str, text: str, role: str = "user") -> int:
    return store.append_message(sid, {"role": role, "content": text}).id


def _group(store: StateStore, chat: str | None, *identities: str) -> list[str]:
    """One session per identity, as a shared group chat has them."""
    sids = [store.create_session(source="telegram", identity=who) for who in identities]
    if chat is not None:
        for sid in sids:
            store.update_session(sid, meta={CHAT_META_KEY: chat})
    return sids


def test_the_engine_and_the_store_name_the_chat_alike() -> None:
    assert META_CHAT == CHAT_META_KEY


def test_the_reply_in_the_same_session_is_the_next_message_by_the_other_role(
    store: StateStore,
) -> None:
    (sid,) = _group(store, None, "owner")
    question = _said(store, sid, "When is the dentist?")
    _said(store, sid, "and bring the forms?")  # the same person again: not a reply
    answer = _said(store, sid, "Tuesday at 9.", role="assistant")
    assert store.replies([question]) == {question: answer}


def test_a_reply_in_the_group_chats_other_session_is_found(store: StateStore) -> None:
    alice, bob = _group(store, "telegram:-100", "alice", "bob")
    other_chat, _ = _group(store, "telegram:-200", "carol", "dan")
    question = _said(store, alice, "What are you researching lately?")
    _said(store, other_chat, "unrelated chatter in another group")
    answer = _said(store, bob, "Adoption agencies, mostly.")
    assert store.replies([question]) == {question: answer}


def test_sessions_without_a_chat_are_not_one_place(store: StateStore) -> None:
    alice, bob = _group(store, None, "alice", "bob")
    question = _said(store, alice, "What are you researching lately?")
    _said(store, bob, "Adoption agencies, mostly.")
    assert store.replies([question]) == {}


def test_a_scoped_lookup_never_returns_another_identitys_reply(store: StateStore) -> None:
    alice, bob = _group(store, "telegram:-100", "alice", "bob")
    question = _said(store, alice, "What are you researching lately?")
    _said(store, bob, "Adoption agencies, mostly.")
    own = _said(store, alice, "Oh, and I found a new café.")
    assert store.replies([question], identity="bob") == {}  # alice's question is not bob's
    assert store.replies([question], identity="alice") == {}  # her own words: no reply
    assert own not in store.replies([question]).values()


def test_an_answer_hours_later_is_not_a_reply(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = _group(store, "telegram:-100", "alice", "bob")
    monkeypatch.setattr(store_module.time, "time", lambda: 1_700_000_000.0)
    question = _said(store, alice, "What are you researching lately?")
    monkeypatch.setattr(store_module.time, "time", lambda: 1_700_000_000.0 + 4 * 3600)
    _said(store, bob, "Adoption agencies, mostly.")
    assert store.replies([question]) == {}


def test_unknown_ids_find_nothing(store: StateStore) -> None:
    assert store.replies([424242]) == {}
