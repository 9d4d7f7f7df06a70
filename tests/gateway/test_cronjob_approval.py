"""A job the model schedules from a chat (issue 26, part C): the owner sees the whole job
in the chat's approval request, a /deny leaves no job, and an approved job is recorded as
the model's with the chat it came from (where it may deliver back)."""

from __future__ import annotations

import asyncio

from gateway_support import eventually

from herald.cron.store import CronStore
from herald.testing.fake_llm import Reply

JOB = {"action": "create", "name": "standup", "schedule": "0 9 * * 1-5",
       "prompt": "list yesterday's commits", "deliver": "loopback:chat-1"}  # fmt: skip


def _requests(chat) -> int:
    return sum("Approval needed" in t for t in chat.texts())


async def test_the_chat_sees_the_whole_job_and_decides(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway(buttons=False)
    home = runner.settings_for("default").home
    fake_llm.enqueue(Reply.tool_call("cronjob", JOB), Reply.text("not scheduled"))
    turn = chat.inject_soon("every weekday at 9, list yesterday's commits here")
    request = await chat.wait_for_text("Approval needed")
    for part in ("cronjob create standup", "0 9 * * 1-5", "list yesterday's commits",
                 "loopback:chat-1"):  # fmt: skip
        assert part in request.text, request.text
    assert (await chat.inject("/deny")).text == "Denied."
    assert (await asyncio.wait_for(turn, 10)).text == "not scheduled"
    with CronStore.for_home(home) as store:
        assert store.jobs() == []

    fake_llm.enqueue(Reply.tool_call("cronjob", JOB), Reply.text("scheduled"))
    turn = chat.inject_soon("yes, do schedule it")
    await eventually(lambda: _requests(chat) == 2)
    assert (await chat.inject("/approve")).text == "Approved (once)."
    assert (await asyncio.wait_for(turn, 10)).text == "scheduled"
    with CronStore.for_home(home) as store:
        (job,) = store.jobs()
    assert (job.name, job.created_by, job.origin) == ("standup", "tool", "loopback:chat-1")
