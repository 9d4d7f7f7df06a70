"""`Agent.open`: the one way a surface creates or resumes a session and builds its agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from herald.engine import Agent, AgentOptions
from herald.state import StateStore
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home
from herald.toolbox import builtin_tools


@pytest.fixture
def home(tmp_path: Path, fake_llm):
    settings = make_home(tmp_path / "home", fake_model_config(fake_llm))
    with StateStore(settings.home.state_db) as store:
        yield settings, store


def _open(settings, store, tmp_path: Path, **kwargs) -> Agent:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return Agent.open(
        settings, store, tools=builtin_tools(), options=AgentOptions(cwd=str(work)), **kwargs
    )


def test_with_a_title_the_session_exists_before_the_first_turn(home, tmp_path):
    settings, store = home
    agent = _open(settings, store, tmp_path, source="telegram", title="plan the trip")
    try:
        record = store.get_session(agent.session_id)
        assert record is not None
        assert (record.source, record.title) == ("telegram", "plan the trip")
    finally:
        agent.close()


def test_a_chat_sessions_meta_names_its_chat_and_keeps_it(home, tmp_path, fake_llm):
    """A gateway session records the chat it serves (its origin), so session_search can
    find a reply in that group chat's other sessions; later meta writes keep it."""
    settings, store = home
    fake_llm.enqueue(Reply.text("hello"))
    work = tmp_path / "work"
    work.mkdir()
    options = AgentOptions(cwd=str(work), origin="telegram:-100")
    agent = Agent.open(settings, store, tools=builtin_tools(), source="telegram", options=options)
    try:
        result = agent.run_turn("hi all")
        record = store.get_session(result.session_id)
        assert record is not None and record.meta.get("chat") == "telegram:-100"
    finally:
        agent.close()
    plain = _open(settings, store, tmp_path, source="cli", title="no chat")
    try:
        record = store.get_session(plain.session_id)
        assert record is not None and "chat" not in record.meta
    finally:
        plain.close()


def test_without_a_title_the_first_turn_creates_the_session(home, tmp_path, fake_llm):
    settings, store = home
    fake_llm.enqueue(Reply.text("hello"))
    agent = _open(settings, store, tmp_path, source="cli")
    try:
        assert agent.session_id is None
        result = agent.run_turn("say hello")
        record = store.get_session(result.session_id)
        assert record is not None and (record.source, record.title) == ("cli", "say hello")
    finally:
        agent.close()


def test_a_session_id_resumes_that_session(home, tmp_path, fake_llm):
    settings, store = home
    fake_llm.enqueue(Reply.text("first"), Reply.text("second"))
    agent = _open(settings, store, tmp_path, source="cli", title="one")
    sid = agent.session_id
    agent.run_turn("first turn")
    agent.close()
    again = _open(settings, store, tmp_path, source="cli", session_id=sid, title="ignored")
    try:
        assert again.session_id == sid
        again.run_turn("second turn")
        history = [m["content"] for m in fake_llm.model_requests()[-1].messages]
        assert "first turn" in history and "first" in history
        assert store.get_session(sid).title == "one"  # resuming does not retitle
    finally:
        again.close()


def test_an_unknown_session_is_a_lookup_error(home, tmp_path):
    settings, store = home
    with pytest.raises(LookupError, match="no session"):
        _open(settings, store, tmp_path, source="cli", session_id="20990101-000000-abcdef")
