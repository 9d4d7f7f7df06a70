"""Issue 29, part 3, end to end on Telegram: memory belongs to someone.

In one family group, the member (dana) tells Herald a personal fact and the model saves
it (USER.md, the agent's notes in MEMORY.md, and the fact store). The owner's next turn, the owner's `session_search`
and the owner's memory recall carry no trace of it, checked in the requests the fake
model received; dana's own next turn does recall it (so the check can fail).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("telegram")

from test_telegram_identities import Gateway, _message
from test_telegram_support import ALICE, BOB, GROUP

from herald.safety import clear_secret_values
from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply
from herald.testing.fake_telegram import FakeTelegramServer
from herald.testing.homes import fake_model_config, make_home, merge

SECRET = "ZEBRA7"
FACT = f"Dana is allergic to peanuts, code {SECRET}"
NOTE = f"Dana files her {SECRET} paperwork in the blue folder"  # an agent note, MEMORY.md


def _tool_results(request: RecordedRequest) -> list[str]:
    out = []
    for message in reversed(request.messages):
        if message.get("role") == "user":
            break
        if message.get("role") == "tool":
            out.append(str(message.get("content")))
    return out


def _script(request: RecordedRequest) -> Reply | None:
    text = request.last_user_text or ""
    results = _tool_results(request)
    if "PERSONAL" in text:
        if not results:
            return Reply.tool_calls(
                [
                    {
                        "name": "memory",
                        "arguments": {"action": "add", "target": "user", "content": FACT},
                    },
                    {"name": "fact_store", "arguments": {"action": "add", "content": FACT}},
                    {
                        "name": "memory",
                        "arguments": {"action": "add", "target": "memory", "content": NOTE},
                    },
                ]
            )
        return Reply.text("Noted, Dana.")
    if "SEARCH" in text:
        if not results:
            return Reply.tool_call("session_search", {"query": f"peanuts {SECRET}"})
        return Reply.text("Search done.")
    if "BROWSE" in text:
        if not results:
            return Reply.tool_call("session_search", {})
        return Reply.text("Browse done.")
    return Reply.text("ok")


@pytest.fixture
def telegram() -> Any:
    with FakeTelegramServer() as server:
        yield server


@pytest.fixture
async def gateway(
    tmp_path: Path, fake_llm: FakeLLMServer, telegram: FakeTelegramServer
) -> AsyncIterator[Gateway]:
    workdir = tmp_path / "work"
    workdir.mkdir()
    fake_llm.set_handler(_script)
    config = merge(
        fake_model_config(fake_llm),
        {
            "learning": {"enabled": False},
            "memory": {"provider": "holographic"},
            "identities": {
                "owner": {"role": "owner", "accounts": [f"telegram:{ALICE}"]},
                "dana": {"role": "member", "accounts": [f"telegram:{BOB}"]},
            },
            "gateway": {
                "cwd": str(workdir),
                "status_edit_interval": 0.0,
                "drain_seconds": 0.0,
                "platforms": {
                    "telegram": {
                        "enabled": True,
                        "token": "${TELEGRAM_BOT_TOKEN}",
                        "base_url": telegram.base_url,
                        "allowed_users": [str(ALICE), str(BOB)],
                    }
                },
            },
        },
    )
    settings = make_home(tmp_path / "home", config, {"TELEGRAM_BOT_TOKEN": telegram.token})
    running = await Gateway(settings).start()
    yield running
    await running.stop()
    clear_secret_values()


def _whole(request: RecordedRequest) -> str:
    return json.dumps(request.body, ensure_ascii=False)


async def _say(telegram: FakeTelegramServer, user: int, text: str, reply: str) -> None:
    name = "alice" if user == ALICE else "bob"
    before = len(telegram.sent_messages(GROUP))
    asked = telegram.send_user_message(GROUP, user, text, "group", username=name)
    await _message(
        telegram,
        GROUP,
        lambda m: m.text == reply and m.reply_to_message_id == asked,
        reply,
    )
    assert len(telegram.sent_messages(GROUP)) > before


async def test_a_members_fact_never_reaches_the_owners_turns(
    gateway: Gateway, telegram: FakeTelegramServer, fake_llm: FakeLLMServer
) -> None:
    await _say(telegram, BOB, "PERSONAL: remember this about me", "Noted, Dana.")
    stored = [r for r in fake_llm.model_requests() if "PERSONAL" in (r.last_user_text or "")]
    assert any(SECRET in result for r in stored for result in _tool_results(r))  # it was saved
    home = gateway.settings.home
    assert SECRET in home.user_memory_file("dana").read_text()
    assert SECRET not in home.user_memory_file("owner").read_text()
    assert SECRET not in (home.memories_dir / "MEMORY.md").read_text()  # the owner's notes
    seen = len(fake_llm.model_requests())

    # The owner's next turn: a plain question that would recall the fact, then searches.
    await _say(telegram, ALICE, f"who is allergic to peanuts {SECRET}?", "ok")
    await _say(telegram, ALICE, "SEARCH my past chats", "Search done.")
    await _say(telegram, ALICE, "BROWSE my past chats", "Browse done.")
    owners = fake_llm.model_requests()[seen:]
    assert len(owners) >= 5
    # The owner's own words (the question, the search the model made of it) carry the
    # code word; nothing else in their requests may (the fact says "code ZEBRA7").
    for request in owners:
        body = _whole(request).replace(f"who is allergic to peanuts {SECRET}?", "")
        body = body.replace(f"peanuts {SECRET}", "")
        assert SECRET not in body, "dana's fact leaked into the owner's request"
        assert "Dana is allergic" not in body
    search = next(r for r in owners if "SEARCH" in (r.last_user_text or "") and _tool_results(r))
    assert json.loads(_tool_results(search)[0])["results"] == []
    browse = next(r for r in owners if "BROWSE" in (r.last_user_text or "") and _tool_results(r))
    listed = json.loads(_tool_results(browse)[0])["sessions"]
    assert all("PERSONAL" not in json.dumps(s) for s in listed)

    # Dana's own next turn recalls it: the isolation is per identity, not a broken recall.
    seen = len(fake_llm.model_requests())
    await _say(telegram, BOB, f"what am I allergic to? peanuts {SECRET}", "ok")
    (danas,) = fake_llm.model_requests()[seen:]
    assert "<memory-context>" in _whole(danas) and "Dana is allergic" in _whole(danas)
