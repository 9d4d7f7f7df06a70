"""Issue 29 on Telegram, end to end: identities and roles in one family group.

The real python-telegram-bot client against the fake Bot API, the real gateway
(`load_adapters` + `serve` + `GatewayRunner`), the fake LLM. Alice is the owner, Bob
is the member "dana", Carol is let in by the allowlist but listed under no identity,
so she talks as a guest.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("telegram")

from test_telegram_support import ALICE, BOB, CAROL, GROUP

from herald.config import Settings
from herald.config.schema_identities import GUEST_TOOLS
from herald.safety import clear_secret_values
from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply
from herald.testing.fake_telegram import FakeTelegramServer, SentMessage
from herald.testing.homes import fake_model_config, make_home, merge

APPROVAL_COMMAND = "python3 -c 'print(6*7)'"  # inline interpreter code: needs approval
GUEST_FORBIDDEN = {"terminal", "process", "write_file", "patch", "cronjob", "delegate_task"}


def _tool_names(request: RecordedRequest) -> set[str]:
    return {t["function"]["name"] for t in request.tools or []}


def _script(request: RecordedRequest) -> Reply | None:
    text = request.last_user_text or ""
    tool_results = 0
    for message in reversed(request.messages):
        if message.get("role") == "user":
            break
        tool_results += message.get("role") == "tool"
    if "CHARLIE" in text:
        if tool_results == 0:
            return Reply.tool_call("terminal", {"command": APPROVAL_COMMAND})
        return Reply.text("The answer is 42.")
    if "GUEST" in text:
        return Reply.text("Hello, guest.")
    if "OWNER" in text:
        return Reply.text("Hello, owner.")
    return Reply.text("ok")


class Gateway:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.stop_event = asyncio.Event()
        self.task: asyncio.Task[int] | None = None

    async def start(self) -> Gateway:
        from herald.gateway.lifecycle import load_adapters, serve, served_settings
        from herald.gateway.runner import GatewayRunner

        adapters, problems = load_adapters(self.settings)
        assert problems == []
        runner = GatewayRunner(
            served_settings(self.settings), default_profile=self.settings.home.profile_label
        )
        self.task = asyncio.ensure_future(
            serve(runner, adapters, home=self.settings.home, stop=self.stop_event)
        )
        return self

    async def stop(self) -> None:
        assert self.task is not None
        self.stop_event.set()
        await asyncio.wait_for(self.task, 30)


@pytest.fixture
def telegram() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as server:
        yield server


def _settings(
    tmp_path: Path, fake_llm: FakeLLMServer, telegram: FakeTelegramServer, shared: bool
) -> Settings:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    fake_llm.set_handler(_script)
    config = merge(
        fake_model_config(fake_llm),
        {
            "learning": {"enabled": False},
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
                        "allowed_users": [str(ALICE), str(BOB), str(CAROL)],
                        "shared_group_sessions": shared,
                    }
                },
            },
        },
    )
    return make_home(tmp_path / "home", config, {"TELEGRAM_BOT_TOKEN": telegram.token})


@pytest.fixture
async def start_gateway(
    tmp_path: Path, fake_llm: FakeLLMServer, telegram: FakeTelegramServer
) -> AsyncIterator[Callable[[bool], Any]]:
    started: list[Gateway] = []

    async def start(shared: bool = False) -> Gateway:
        running = await Gateway(_settings(tmp_path, fake_llm, telegram, shared)).start()
        started.append(running)
        return running

    yield start
    for running in started:
        if running.task is not None and not running.task.done():
            await running.stop()
    clear_secret_values()


async def _message(
    server: FakeTelegramServer, chat_id: int, predicate: Callable[[SentMessage], bool], what: str
) -> SentMessage:
    def probe() -> SentMessage | None:
        return next((m for m in server.sent_messages(chat_id) if predicate(m)), None)

    return await server.await_until(probe, 20.0, what)


def _ran_the_command(fake_llm: FakeLLMServer) -> bool:
    return any(
        m.get("role") == "tool" and "42" in str(m.get("content"))
        for request in fake_llm.model_requests()
        for m in request.messages
    )


@pytest.mark.parametrize("shared", [False, True], ids=["per-member", "shared-session"])
async def test_a_member_pressing_the_owners_approval_button_is_refused(
    shared: bool,
    telegram: FakeTelegramServer,
    fake_llm: FakeLLMServer,
    start_gateway: Callable[[bool], Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    await start_gateway(shared)
    telegram.send_user_message(GROUP, ALICE, "compute CHARLIE", "group", username="alice")
    prompt = await _message(telegram, GROUP, lambda m: bool(m.buttons), "the approval request")
    assert APPROVAL_COMMAND in prompt.text

    with caplog.at_level(logging.WARNING, logger="herald.gateway.identities"):
        telegram.press_button(GROUP, BOB, prompt.message_id, "/approve")
        refusal = await _message(telegram, GROUP, lambda m: "⛔" in m.text, "the refusal")
    assert "approver" in refusal.text and "dana" in refusal.text
    assert any("refused /approve" in r.getMessage() for r in caplog.records)
    await asyncio.sleep(0.3)  # give a wrongly accepted approval time to run the command
    assert not _ran_the_command(fake_llm)
    assert not any("42" in m.text for m in telegram.sent_messages(GROUP))

    # The owner's own press still approves.
    telegram.press_button(GROUP, ALICE, prompt.message_id, "/approve")
    await _message(telegram, GROUP, lambda m: m.text == "The answer is 42.", "the answer")
    assert _ran_the_command(fake_llm)


async def test_a_guests_turn_is_never_offered_terminal_or_file_writes(
    telegram: FakeTelegramServer, fake_llm: FakeLLMServer, start_gateway: Callable[[bool], Any]
) -> None:
    await start_gateway(False)
    telegram.send_user_message(GROUP, CAROL, "hi GUEST", "group", username="carol")
    await _message(telegram, GROUP, lambda m: m.text == "Hello, guest.", "the guest's reply")
    telegram.send_user_message(GROUP, ALICE, "hi OWNER", "group", username="alice")
    await _message(telegram, GROUP, lambda m: m.text == "Hello, owner.", "the owner's reply")
    guest = next(r for r in fake_llm.model_requests() if "GUEST" in (r.last_user_text or ""))
    owner = next(r for r in fake_llm.model_requests() if "OWNER" in (r.last_user_text or ""))
    assert _tool_names(guest) & GUEST_FORBIDDEN == set()
    assert _tool_names(guest) <= set(GUEST_TOOLS)  # an allowlist: MCP/plugin tools too
    assert "read_file" in _tool_names(guest)  # reading is still offered
    assert GUEST_FORBIDDEN - {"cronjob", "delegate_task"} <= _tool_names(owner)


async def test_a_guest_calling_a_hidden_tool_anyway_runs_nothing(
    telegram: FakeTelegramServer,
    fake_llm: FakeLLMServer,
    start_gateway: Callable[[bool], Any],
    tmp_path: Path,
) -> None:
    # A hijacked model may name a tool it was not offered; it must not run.
    target = tmp_path / "work" / "owned.txt"

    def script(request: RecordedRequest) -> Reply:
        if request.messages[-1].get("role") == "tool":
            return Reply.text("done")
        return Reply.tool_call("write_file", {"path": str(target), "content": "x"})

    await start_gateway(False)
    fake_llm.set_handler(script)
    telegram.send_user_message(GROUP, CAROL, "write it", "group", username="carol")
    await _message(telegram, GROUP, lambda m: m.text == "done", "the guest's reply")
    assert not target.exists()


async def test_admin_commands_are_the_owners(
    telegram: FakeTelegramServer, fake_llm: FakeLLMServer, start_gateway: Callable[[bool], Any]
) -> None:
    await start_gateway(False)
    for command in ("/model other-model", "/compress", "/kanban approve 1", "/agents stop all"):
        telegram.send_user_message(GROUP, BOB, command, "group", username="bob")
        words = command.split()
        shown = words[0] if words[0] in ("/model", "/compress") else " ".join(words[:2])
        await _message(
            telegram,
            GROUP,
            lambda m, s=shown: m.text.startswith(f"⛔ {s} is for the owner"),
            command,
        )
    assert fake_llm.model_requests() == []


async def test_a_shared_group_session_never_mixes_identities(
    telegram: FakeTelegramServer, fake_llm: FakeLLMServer, start_gateway: Callable[[bool], Any]
) -> None:
    await start_gateway(True)
    telegram.send_user_message(GROUP, ALICE, "my salary is 9100 OWNER", "group", username="alice")
    await _message(telegram, GROUP, lambda m: m.text == "Hello, owner.", "the owner's reply")
    telegram.send_user_message(GROUP, BOB, "what did the owner say? GUEST", "group", username="bob")
    await _message(telegram, GROUP, lambda m: m.text == "Hello, guest.", "dana's reply")
    danas = next(r for r in fake_llm.model_requests() if "GUEST" in (r.last_user_text or ""))
    assert "9100" not in json.dumps(danas.body)


async def test_the_owner_approves_a_members_command_in_the_group(
    telegram: FakeTelegramServer, fake_llm: FakeLLMServer, start_gateway: Callable[[bool], Any]
) -> None:
    await start_gateway(False)  # per-member sessions: the request waits in dana's
    telegram.send_user_message(GROUP, BOB, "compute CHARLIE", "group", username="bob")
    prompt = await _message(telegram, GROUP, lambda m: bool(m.buttons), "the approval request")
    telegram.press_button(GROUP, BOB, prompt.message_id, "/approve")
    await _message(telegram, GROUP, lambda m: "⛔" in m.text, "dana may not approve")
    assert not _ran_the_command(fake_llm)
    telegram.press_button(GROUP, ALICE, prompt.message_id, "/approve")
    await _message(telegram, GROUP, lambda m: m.text == "The answer is 42.", "the answer")
    assert _ran_the_command(fake_llm)
