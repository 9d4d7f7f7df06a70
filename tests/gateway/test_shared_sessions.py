"""A cached agent never answers from a stale view of its session: when something else
wrote to the session since its last turn (another entrance bound to the same session,
or another process such as `herald chat --resume`), the next turn rebuilds it from the
store. Before, the stale agent left out what was said elsewhere, and its next
compression named rows another agent had already archived and failed on every turn."""

from __future__ import annotations

from herald.state import StateStore
from herald.testing.fake_llm import Reply


async def test_a_second_entrance_on_the_same_session_is_seen_by_the_first(
    start_gateway, fake_llm
) -> None:
    runner, chat = await start_gateway({"allowed_users": {"loopback": ["*"]}})
    first = await chat.inject("hello from a", chat_id="a")
    runner.bind_session(chat.event("x", chat_id="b"), first.session_id)
    fake_llm.enqueue(Reply.text("noted"))
    elsewhere = await chat.inject("the code word is PLOVER", chat_id="b")
    assert elsewhere.session_id == first.session_id
    assert len(runner.cache) == 2  # two agents on one session

    await chat.inject("what was the code word?", chat_id="a")
    sent = fake_llm.model_requests()[-1].messages
    assert any("the code word is PLOVER" in str(m.get("content")) for m in sent)


async def test_rows_another_process_added_are_seen_by_the_cached_agent(
    start_gateway, gateway_settings, fake_llm
) -> None:
    runner, chat = await start_gateway()
    first = await chat.inject("hello")
    with StateStore(gateway_settings().home.state_db) as other:
        other.append_message(first.session_id, {"role": "user", "content": "from the CLI: FINCH"})
        other.append_message(first.session_id, {"role": "assistant", "content": "ok, FINCH"})
    await chat.inject("and now?")
    sent = fake_llm.model_requests()[-1].messages
    assert any("from the CLI: FINCH" in str(m.get("content")) for m in sent)
    assert len(runner.cache) == 1  # the stale agent was replaced, not kept beside
