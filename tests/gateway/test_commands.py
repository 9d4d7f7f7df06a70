"""Slash commands in chat: the shared registry's gateway commands, over the loopback
platform, with real turns (a real `terminal` tool call where a turn must be running)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from gateway_support import eventually

from herald.engine.commands import commands_for
from herald.gateway.commands import HANDLERS
from herald.testing.fake_llm import Reply

# Inline interpreter code is flagged as needing approval; it only prints 42.
NEEDS_APPROVAL = "python3 -c 'print(6*7)'"
# Writes a marker file in the (tmp) work directory, to prove whether it ran.
NEEDS_APPROVAL_TRACE = 'python3 -c \'open("ran.txt", "w").write("x")\''


def test_every_gateway_command_in_the_registry_has_a_handler() -> None:
    assert set(HANDLERS) == {c.name for c in commands_for("gateway")}


async def test_help_lists_the_gateway_commands(start_gateway) -> None:
    _runner, chat = await start_gateway()
    result = await chat.inject("/help")
    assert result.status == "command"
    for name in ("/new", "/stop", "/steer", "/compress", "/usage", "/model", "/approve", "/deny"):
        assert name in result.text
    assert "/exit" not in result.text
    assert chat.texts() == [result.text]


async def test_unknown_commands_are_answered_not_sent_to_the_model(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    result = await chat.inject("/bogus")
    assert "Unknown command /bogus" in result.text
    assert fake_llm.model_requests() == []


async def test_new_starts_a_fresh_session(start_gateway) -> None:
    runner, chat = await start_gateway()
    first = await chat.inject("hello")
    reply = await chat.inject("/new")
    assert "Started a new session" in reply.text and first.session_id in reply.text
    second = await chat.inject("hello again")
    assert second.session_id != first.session_id
    key = next(iter(runner.cache.keys()))
    assert runner.state.session_for(key) == second.session_id


async def test_usage_reports_the_sessions_counters(start_gateway) -> None:
    _runner, chat = await start_gateway()
    assert "No messages" in (await chat.inject("/usage")).text
    await chat.inject("hello")
    text = (await chat.inject("/usage")).text
    assert "model calls: 1" in text and "prompt tokens:" in text
    assert "cache hit rate" in text and "spend: $" in text and "last request:" in text


async def test_stop_interrupts_a_running_tool(start_gateway, fake_llm, workdir: Path) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 30"}))
    turn = chat.inject_soon("run the long job")
    status = await chat.wait_for_text("running terminal: sleep 30")
    started = time.monotonic()
    stop = await chat.inject("/stop")
    assert "Stopping the running turn" in stop.text
    result = await asyncio.wait_for(turn, 10)
    assert time.monotonic() - started < 5
    assert result.exit_reason == "interrupted_by_user"
    assert status.text.startswith("■ stopped")  # the status line was finalized
    assert len(fake_llm.model_requests()) == 1  # no model call after the stop


async def test_stop_with_nothing_running_says_so(start_gateway) -> None:
    _runner, chat = await start_gateway()
    assert "Nothing is running" in (await chat.inject("/stop")).text


async def test_commands_that_touch_the_agent_wait_for_an_idle_session(
    start_gateway, fake_llm
) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 30"}))
    turn = chat.inject_soon("long job")
    await chat.wait_for_text("running terminal")
    refused = await chat.inject("/new")
    assert "cannot run during a turn" in refused.text
    await chat.inject("/stop")
    await asyncio.wait_for(turn, 10)


async def test_approve_answers_a_pending_approval(start_gateway, fake_llm, workdir: Path) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": NEEDS_APPROVAL_TRACE}),
        Reply.text("it ran"),
    )
    turn = chat.inject_soon("make the marker")
    request = await chat.wait_for_text("Approval needed")
    assert "python3 -c" in request.text
    assert request.buttons is not None
    assert [b.data for row in request.buttons for b in row] == [
        "/approve",
        "/approve session",
        "/approve always",
        "/deny",
    ]
    answer = await chat.inject("/approve")
    assert answer.text == "Approved (once)."
    result = await asyncio.wait_for(turn, 10)
    assert result.text == "it ran"
    assert (workdir / "ran.txt").exists()


async def test_deny_refuses_and_the_command_never_runs(
    start_gateway, fake_llm, workdir: Path
) -> None:
    _runner, chat = await start_gateway(buttons=False)
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": NEEDS_APPROVAL_TRACE}),
        Reply.text("understood, not running it"),
    )
    turn = chat.inject_soon("make the marker")
    request = await chat.wait_for_text("Approval needed")
    assert request.buttons is None
    assert "/approve, /approve session, /approve always, /deny" in request.text
    assert (await chat.inject("/deny")).text == "Denied."
    result = await asyncio.wait_for(turn, 10)
    assert result.text == "understood, not running it"
    assert not (workdir / "ran.txt").exists()
    tool_result = fake_llm.model_requests()[-1].messages[-1]
    assert "denied" in str(tool_result.get("content"))


async def test_no_answer_in_time_is_a_denial(start_gateway, fake_llm, workdir: Path) -> None:
    _runner, chat = await start_gateway(extra={"approvals": {"timeout_seconds": 0.5}})
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": NEEDS_APPROVAL_TRACE}), Reply.text("ok")
    )
    result = await chat.inject("make the marker")
    assert result.text == "ok"
    assert any("No answer within" in text for text in chat.texts())
    assert not (workdir / "ran.txt").exists()
    assert "Nothing is waiting" in (await chat.inject("/approve")).text


async def test_approve_session_is_offered_and_remembered(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": NEEDS_APPROVAL}),
        Reply.tool_call("terminal", {"command": NEEDS_APPROVAL}),
        Reply.text("ran twice"),
    )
    turn = chat.inject_soon("twice")
    await chat.wait_for_text("Approval needed")
    assert (await chat.inject("/approve session")).text == "Approved (session)."
    result = await asyncio.wait_for(turn, 10)
    assert result.text == "ran twice"
    assert sum("Approval needed" in t for t in chat.texts()) == 1


async def test_steer_reaches_the_running_turn(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "sleep 1"}), Reply.text("done, steered")
    )
    turn = chat.inject_soon("start")
    await chat.wait_for_text("running terminal")
    steer = await chat.inject("/steer use the other directory")
    assert "Passed to the running turn" in steer.text
    await asyncio.wait_for(turn, 10)
    last = fake_llm.model_requests()[-1].messages[-1]
    assert "use the other directory" in str(last.get("content"))


async def test_steer_when_idle_runs_as_a_message(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    await chat.inject("/steer say hello")
    await eventually(lambda: len(fake_llm.model_requests()) == 1)
    await chat.wait_for_text("(fake) done")
    assert fake_llm.model_requests()[0].last_user_text == "say hello"


async def test_compress_and_model_run_on_the_session(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    assert "Nothing to compress" in (await chat.inject("/compress")).text
    await chat.inject("hello")
    assert (await chat.inject("/model")).text == "openai:fake-gpt"
    switched = await chat.inject("/model fake-gpt-2")
    assert "Now using openai:fake-gpt-2" in switched.text
    await chat.inject("after the switch")
    assert fake_llm.model_requests()[-1].model == "fake-gpt-2"


async def test_clarify_questions_are_answered_by_the_next_message(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway()
    fake_llm.enqueue(
        Reply.tool_call("clarify", {"question": "Which colour?", "choices": ["red", "blue"]}),
        Reply.text("blue it is"),
    )
    turn = chat.inject_soon("paint it")
    question = await chat.wait_for_text("❓ Which colour?")
    assert "1. red" in question.text and "2. blue" in question.text
    answer = await chat.inject("2")
    assert answer.status == "command"
    assert (await asyncio.wait_for(turn, 10)).text == "blue it is"
    tool_message = fake_llm.model_requests()[-1].messages[-1]
    assert '"answer": "blue"' in str(tool_message["content"])


async def test_request_response_platforms_never_ask_a_human(
    start_gateway, fake_llm, workdir
) -> None:
    from herald.gateway.testing import LoopbackAdapter

    api = LoopbackAdapter("api-like", push=False)
    _runner, _ = await start_gateway({"allowed_users": {"api-like": ["*"]}}, adapter=api)
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": NEEDS_APPROVAL_TRACE}), Reply.text("refused")
    )
    result = await asyncio.wait_for(api.inject("make the marker"), 10)
    assert result.text == "refused" and api.sent == []
    assert not (workdir / "ran.txt").exists()
    assert "no one can approve it here" in str(
        fake_llm.model_requests()[-1].messages[-1]["content"]
    )


async def test_kanban_shows_what_waits_for_the_owner_and_takes_their_answer(
    start_gateway, fake_llm
) -> None:
    from herald.kanban import ClaimOwner, NewTask, Status, open_board

    runner, chat = await start_gateway()
    settings = runner.settings_for("default")
    with open_board(settings.config, settings.home, settings.secrets) as board:
        review = board.add(NewTask("draft the release notes"))
        lease = board.claim(ClaimOwner("worker", "here"), 60, task_id=review.id)
        board.request_review(review.id, "notes are in NOTES.md", lease=lease, author="worker")
        stuck = board.add(NewTask("renew the certificate"))
        lease = board.claim(ClaimOwner("worker", "here"), 60, task_id=stuck.id)
        board.block(stuck.id, "needs the registrar password", lease=lease, author="worker")
        board.add(NewTask("later"))

    listing = (await chat.inject("/kanban")).text
    assert f"#{review.id} draft the release notes — in review: notes are in NOTES.md" in listing
    assert f"#{stuck.id} renew the certificate — blocked: needs the registrar password" in listing
    assert "Also: 1 todo" in listing

    assert "it is done" in (await chat.inject(f"/kanban approve {review.id} looks good")).text
    assert "it is todo" in (await chat.inject(f"/kanban unblock #{stuck.id} password added")).text
    refused = (await chat.inject(f"/kanban approve {stuck.id}")).text
    assert "review" in refused  # not in review any more: the board says why
    assert "Usage: /kanban" in (await chat.inject("/kanban reject 1")).text  # no reason
    with open_board(settings.config, settings.home, settings.secrets) as board:
        assert board.show(review.id).status is Status.DONE
        assert board.show(stuck.id).status is Status.TODO
    assert fake_llm.model_requests() == []  # commands never reach the model


async def test_rollback_in_chat_undoes_a_turns_file_change_and_then_the_rollback(
    start_gateway, fake_llm, workdir: Path
) -> None:
    (workdir / "notes.txt").write_text("mine\n")
    _runner, chat = await start_gateway()
    fake_llm.enqueue(
        Reply.tool_call("write_file", {"path": "notes.txt", "content": "overwritten\n"}),
        Reply.text("done"),
    )
    await chat.inject("rewrite the notes")
    assert (workdir / "notes.txt").read_text() == "overwritten\n"
    listing = (await chat.inject("/rollback list")).text
    assert "write_file" in listing and "notes.txt" in listing
    restored = (await chat.inject("/rollback")).text
    assert "Restored the workdir to checkpoint 1" in restored
    assert (workdir / "notes.txt").read_text() == "mine\n"
    await chat.inject("/rollback")  # the restore itself is undone
    assert (workdir / "notes.txt").read_text() == "overwritten\n"
    assert len(fake_llm.model_requests()) == 2  # the commands never reach the model
