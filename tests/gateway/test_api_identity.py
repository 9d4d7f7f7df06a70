"""Issue 29, the API entrance: a stateless request joins a stored session only when that
session's history is the request's history exactly, and each key sees and names only
its own identity's sessions. Driven by the official `openai` client (and httpx for
Herald's session routes) against the real server, real turns against the fake LLM."""

from __future__ import annotations

import secrets
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_api_harness import Running, running_adapter

from herald.config import ConfigError, Secrets
from herald.gateway.platforms.api.adapter import create_adapter
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import make_home

# Strong, distinct keys (served secrets must be): one per caller.
OWNER_KEY = secrets.token_urlsafe(32)
DANA_KEY = secrets.token_urlsafe(32)
CHAT_ONLY_KEY = secrets.token_urlsafe(32)
ALL_KEY = secrets.token_urlsafe(32)

GATEWAY = {
    "api": {
        "enabled": True,
        "port": 0,
        "api_key": "${HERALD_API_KEY}",
        "keys": [
            {"name": "dana-phone", "key": "${DANA_KEY}", "identity": "dana"},
            {"name": "widget", "key": "${CHAT_ONLY_KEY}", "scopes": ["chat"]},
            {"name": "auditor", "key": "${ALL_KEY}", "scopes": ["sessions:all"]},
        ],
    }
}
IDENTITIES = {"identities": {"dana": {"role": "member", "accounts": ["telegram:67890"]}}}
ENV = {
    "HERALD_API_KEY": OWNER_KEY,
    "DANA_KEY": DANA_KEY,
    "CHAT_ONLY_KEY": CHAT_ONLY_KEY,
    "ALL_KEY": ALL_KEY,
}


@pytest.fixture
def api(tmp_path: Path, fake_llm: FakeLLMServer) -> Iterator[Running]:
    with running_adapter(tmp_path, fake_llm, "api", GATEWAY, env=ENV, config=IDENTITIES) as running:
        yield running


def client(api: Running, key: str = OWNER_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{api.url}/v1", api_key=key, max_retries=0, timeout=30)


def ask(api: Running, messages: list[dict[str, str]], key: str = OWNER_KEY, **kw: Any) -> str:
    completion = client(api, key).chat.completions.create(model="m", messages=messages, **kw)
    return completion.choices[0].message.content or ""


def sent_to_model(request: Any) -> str:
    """Everything one model request carried, as one string to search."""
    return "\n".join(str(m.get("content")) for m in request.messages)


def get(api: Running, path: str, key: str) -> httpx.Response:
    return httpx.get(f"{api.url}{path}", headers={"Authorization": f"Bearer {key}"}, timeout=10)


def u(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def a(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


# ---- stateless requests: exact history or a fork ------------------------------------------


def test_audit_client_b_with_the_same_opening_never_sees_a_later_message(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("Hello!"))
    fake_llm.enqueue(Reply.text("Noted."))
    fake_llm.enqueue(Reply.text("I know nothing about you yet."))
    assert ask(api, [u("hi")]) == "Hello!"  # client A
    ask(api, [u("hi"), a("Hello!"), u("My bank PIN is 4711")])  # client A goes on
    # Client B's conversation began exactly like A's (same greeting, same answer).
    reply = ask(api, [u("hi"), a("Hello!"), u("What do you know about me?")])
    assert reply == "I know nothing about you yet."
    b_request = fake_llm.model_requests()[-1]
    assert "What do you know about me?" in sent_to_model(b_request)
    assert "4711" not in sent_to_model(b_request)
    # B's own history still reached the model as messages.
    assert [m["content"] for m in b_request.messages if m["role"] == "assistant"] == ["Hello!"]


def test_a_regenerate_and_an_edit_never_carry_the_abandoned_answer(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("Paris."))
    fake_llm.enqueue(Reply.text("ABANDONED answer about Lyon"))
    fake_llm.enqueue(Reply.text("Regenerated answer"))
    fake_llm.enqueue(Reply.text("Edited answer"))
    ask(api, [u("capital of France?")])
    history = [u("capital of France?"), a("Paris."), u("and its second city?")]
    ask(api, history)
    ask(api, history)  # regenerate: the same request again
    regenerate = fake_llm.model_requests()[-1]
    assert "ABANDONED" not in sent_to_model(regenerate)
    assert sent_to_model(regenerate).count("and its second city?") == 1
    ask(api, [*history[:2], u("and its third city?")])  # edit the last question
    edit = sent_to_model(fake_llm.model_requests()[-1])
    assert "ABANDONED" not in edit and "second city" not in edit and "Regenerated" not in edit


def test_continuing_unchanged_still_joins_the_session(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("one"))
    fake_llm.enqueue(Reply.text("two"))
    ask(api, [u("first")])
    ask(api, [u("first"), a("one"), u("second")])
    sessions = api.store.list_sessions(source="api")
    assert len(sessions) == 1  # joined, not forked: nothing stored twice
    assert [m.content for m in api.store.get_messages(sessions[0].id)] == [
        "first",
        "one",
        "second",
        "two",
    ]


def test_two_clients_sending_the_same_history_at_once_never_share_a_turn(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("Hello!"))
    ask(api, [u("hi")])
    # A's turn is slow; B sends the same opening while it runs.
    fake_llm.enqueue(Reply.text("A's slow reply " * 4, chunk_size=4, chunk_delay=0.03))
    fake_llm.enqueue(Reply.text("B's reply"))
    opening = [u("hi"), a("Hello!")]
    first = threading.Thread(target=ask, args=(api, [*opening, u("secret of A: 9931")]))
    first.start()
    while not fake_llm.model_requests()[1:]:
        threading.Event().wait(0.01)
    ask(api, [*opening, u("question of B")])
    first.join(30)
    b_request = next(r for r in fake_llm.model_requests() if "question of B" in sent_to_model(r))
    assert "9931" not in sent_to_model(b_request)
    assert "slow reply" not in sent_to_model(b_request)


def test_another_identity_never_joins_the_owners_conversation(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("Hello!"))
    fake_llm.enqueue(Reply.text("for dana"))
    ask(api, [u("hi")])
    ask(api, [u("hi"), a("Hello!"), u("dana here")], key=DANA_KEY)
    owners = api.store.list_sessions(source="api", identity="owner")
    danas = api.store.list_sessions(source="api", identity="dana")
    assert len(owners) == 1 and len(danas) == 1
    assert [m.content for m in api.store.get_messages(owners[0].id)] == ["hi", "Hello!"]


# ---- named sessions belong to an identity -------------------------------------------------


def test_user_names_a_session_among_the_callers_own_only(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("ok owner"))
    fake_llm.enqueue(Reply.text("ok dana"))
    ask(api, [u("owner's plan: surprise party on Friday")], user="shared")
    ask(api, [u("what is planned?")], key=DANA_KEY, user="shared")
    dana_request = sent_to_model(fake_llm.model_requests()[-1])
    assert "surprise party" not in dana_request
    # The session header picks the same way.
    fake_llm.enqueue(Reply.text("again"))
    client(api, DANA_KEY).chat.completions.create(
        model="m",
        messages=[u("and now?")],
        extra_headers={"X-Herald-Session": "shared"},
    )
    assert "surprise party" not in sent_to_model(fake_llm.model_requests()[-1])
    assert {s.identity for s in api.store.list_sessions(source="api")} == {"owner", "dana"}


# ---- keys and scopes ------------------------------------------------------------------------


def test_a_chat_scoped_key_may_not_read_a_cli_session(api: Running) -> None:
    cli = api.store.create_session(source="cli", title="private terminal chat")
    api.store.append_message(cli, {"role": "user", "content": "my diary"})
    response = get(api, f"/v1/sessions/{cli}", CHAT_ONLY_KEY)
    assert response.status_code == 403
    assert "my diary" not in response.text
    assert get(api, "/v1/sessions", CHAT_ONLY_KEY).status_code == 403
    # The owner's own api_key (sessions:own) does not see other entrances either.
    assert get(api, f"/v1/sessions/{cli}", OWNER_KEY).status_code == 403
    # Nor by a unique prefix of the id.
    assert get(api, f"/v1/sessions/{cli[:-2]}", OWNER_KEY).status_code == 403


def test_sessions_own_lists_only_its_identitys_api_sessions(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("owner reply"))
    fake_llm.enqueue(Reply.text("dana reply"))
    ask(api, [u("owner question")])
    ask(api, [u("dana question")], key=DANA_KEY)
    api.store.create_session(source="cli", title="terminal")
    danas = get(api, "/v1/sessions", DANA_KEY).json()["data"]
    assert [s["title"] for s in danas] == ["dana question"]
    owners = get(api, "/v1/sessions", OWNER_KEY).json()["data"]
    assert [s["title"] for s in owners] == ["owner question"]
    assert get(api, "/v1/sessions?source=cli", DANA_KEY).json()["data"] == []
    owner_session = next(s["id"] for s in owners)
    forbidden = get(api, f"/v1/sessions/{owner_session}", DANA_KEY)
    assert forbidden.status_code == 403 and "owner question" not in forbidden.text
    assert forbidden.json()["error"]["code"] == "session_forbidden"
    posted = httpx.post(
        f"{api.url}/v1/sessions/{owner_session}/messages",
        headers={"Authorization": f"Bearer {DANA_KEY}"},
        json={"content": "let me in"},
        timeout=10,
    )
    assert posted.status_code == 403
    assert len(fake_llm.model_requests()) == 2  # no turn ran for that post
    # sessions:all sees every identity and entrance, but has no chat scope.
    everything = get(api, "/v1/sessions", ALL_KEY).json()["data"]
    assert sorted((s["identity"], s["source"]) for s in everything) == [
        ("dana", "api"),
        ("owner", "api"),
        ("owner", "cli"),
    ]
    with pytest.raises(openai.PermissionDeniedError):
        ask(api, [u("hello")], key=ALL_KEY)


def test_a_wrong_key_is_401(api: Running) -> None:
    assert get(api, "/v1/sessions", secrets.token_urlsafe(32)).status_code == 401


# ---- configuration ------------------------------------------------------------------------


def _adapter_for(tmp_path: Path, keys: list[dict[str, Any]], env: dict[str, str]) -> Any:
    config = {"gateway": {"platforms": {"api": {"keys": keys}}}, **IDENTITIES}
    settings = make_home(tmp_path / "home", config)
    return create_adapter(settings.config, Secrets(settings.home.env_path, environ=env))


def test_a_key_for_an_unknown_identity_is_refused(tmp_path: Path) -> None:
    keys = [{"name": "typo", "key": "${K}", "identity": "dnaa"}]
    with pytest.raises(ConfigError, match="dnaa"):
        _adapter_for(tmp_path, keys, {"K": DANA_KEY})


def test_two_callers_with_one_key_are_refused(tmp_path: Path) -> None:
    keys = [
        {"name": "one", "key": "${K}", "identity": "dana"},
        {"name": "two", "key": "${K}", "scopes": ["sessions:all"]},
    ]
    with pytest.raises(ConfigError, match="same value"):
        _adapter_for(tmp_path, keys, {"K": DANA_KEY})


def test_keys_alone_serve_without_an_api_key(tmp_path: Path) -> None:
    adapter = _adapter_for(
        tmp_path, [{"name": "d", "key": "${K}", "identity": "dana"}], {"K": DANA_KEY}
    )
    caller = adapter.keyring.caller_for(DANA_KEY)
    assert caller is not None and caller.identity == "dana"
    assert adapter.keyring.caller_for(OWNER_KEY) is None
    assert DANA_KEY in adapter.extra_secrets()  # redacted like the api_key
