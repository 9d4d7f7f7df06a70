"""Sessions over the API: selection by `user` and by header, server-side history, the
caller's system message, and the /v1/sessions endpoints."""

from __future__ import annotations

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

from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply
from herald.testing.strong_secrets import API_KEY

AUTH = {"Authorization": f"Bearer {API_KEY}"}


@pytest.fixture
def api(tmp_path: Path, fake_llm: FakeLLMServer) -> Iterator[Running]:
    gateway = {"api": {"enabled": True, "port": 0, "api_key": "${HERALD_API_KEY}"}}
    with running_adapter(
        tmp_path, fake_llm, "api", gateway, env={"HERALD_API_KEY": API_KEY}
    ) as running:
        yield running


def client_for(api: Running) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{api.url}/v1", api_key=API_KEY, max_retries=0, timeout=30)


def ask(api: Running, text: str, **kw: Any) -> str:
    completion = client_for(api).chat.completions.create(
        model="herald", messages=[{"role": "user", "content": text}], **kw
    )
    return completion.choices[0].message.content or ""


def history(request: RecordedRequest) -> str:
    return "\n".join(str(m.get("content")) for m in request.messages if m.get("role") != "system")


def test_user_field_selects_separate_sessions(api: Running, fake_llm: FakeLLMServer) -> None:
    ask(api, "my name is Alice", user="alice")
    ask(api, "my name is Bob", user="bob")
    ask(api, "what is my name?", user="alice")
    third = fake_llm.model_requests()[2]
    assert "my name is Alice" in history(third)
    assert "Bob" not in history(third)
    second = fake_llm.model_requests()[1]
    assert "Alice" not in history(second)
    assert len(api.sink.sessions) == 2


def test_header_selects_the_session_and_wins_over_user(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    ask(api, "remember the colour teal", extra_headers={"X-Herald-Session": "carol"})
    ask(api, "unrelated chat", user="alice")
    ask(api, "which colour?", user="alice", extra_headers={"X-Herald-Session": "carol"})
    last = fake_llm.model_requests()[-1]
    assert "remember the colour teal" in history(last)
    assert "unrelated chat" not in history(last)


def test_without_user_or_header_no_shared_default_session(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    ask(api, "first")
    ask(api, "second")
    assert "first" not in history(fake_llm.model_requests()[-1])
    hints = [d.event.session_hint for d in api.sink.dispatched]
    assert "default" not in hints and len(set(hints)) == 2


def test_only_the_last_user_message_is_new_input_and_system_is_caller_system(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    client_for(api).chat.completions.create(
        model="herald",
        user="pirate",
        messages=[
            {"role": "system", "content": "Answer like a pirate."},
            {"role": "user", "content": "client-side old question"},
            {"role": "assistant", "content": "client-side old answer"},
            {"role": "user", "content": [{"type": "text", "text": "the new question"}]},
        ],
    )
    (request,) = fake_llm.model_requests()
    assert "Answer like a pirate." in (request.system or "")
    sent = history(request)
    assert "the new question" in sent
    assert "client-side old" not in sent


def test_session_endpoints_list_show_and_post(api: Running, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(Reply.text("Noted: the launch is on Friday."))
    response = httpx.post(
        f"{api.url}/v1/chat/completions",
        headers={**AUTH, "X-Herald-Session": "planning"},
        json={"model": "herald", "messages": [{"role": "user", "content": "launch is Friday"}]},
        timeout=30,
    )
    assert response.status_code == 200
    session_id = response.headers["X-Herald-Session-Id"]

    listed = httpx.get(f"{api.url}/v1/sessions", headers=AUTH, timeout=10).json()
    assert listed["object"] == "list"
    row = next(s for s in listed["data"] if s["id"] == session_id)
    assert row["source"] == "api" and row["title"].startswith("launch is Friday")

    shown = httpx.get(f"{api.url}/v1/sessions/{session_id}", headers=AUTH, timeout=10).json()
    roles = [(m["role"], m["content"]) for m in shown["messages"]]
    assert ("user", "launch is Friday") in roles
    assert ("assistant", "Noted: the launch is on Friday.") in roles

    fake_llm.enqueue(Reply.text("It is on Friday."))
    posted = httpx.post(
        f"{api.url}/v1/sessions/{session_id[:12]}/messages",  # a unique prefix works too
        headers=AUTH,
        json={"content": "when is the launch?"},
        timeout=30,
    )
    assert posted.status_code == 200, posted.text
    body = posted.json()
    assert body["session_id"] == session_id and body["content"] == "It is on Friday."
    assert body["status"] == "replied" and body["usage"]["total_tokens"] > 0
    assert "launch is Friday" in history(fake_llm.model_requests()[-1])

    missing = httpx.get(f"{api.url}/v1/sessions/nope-nope", headers=AUTH, timeout=10)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "session_not_found"


def test_posting_to_another_entrances_session_is_refused(api: Running) -> None:
    cli_session = api.store.create_session(source="cli", title="terminal work")
    response = httpx.post(
        f"{api.url}/v1/sessions/{cli_session}/messages",
        headers=AUTH,
        json={"content": "hi"},
        timeout=10,
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "session_not_api"
    assert api.sink.dispatched == []
    # The api_key is the owner's with sessions:own: another entrance's sessions are not
    # its to list, even when it asks for them by source.
    listed = httpx.get(f"{api.url}/v1/sessions?source=cli", headers=AUTH, timeout=10).json()
    assert listed["data"] == []


def test_overlapping_requests_for_one_session_run_in_turn(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply.text("first answer", delay=0.3), Reply.text("second answer"))
    answers: dict[str, str] = {}
    first = threading.Thread(target=lambda: answers.update(a=ask(api, "one", user="same")))
    first.start()
    assert fake_llm.wait_for_requests(1, timeout=10)
    answers["b"] = ask(api, "two", user="same")
    first.join(10)
    assert answers == {"a": "first answer", "b": "second answer"}
    second = fake_llm.model_requests()[1]
    assert "one" in history(second) and "first answer" in history(second)
