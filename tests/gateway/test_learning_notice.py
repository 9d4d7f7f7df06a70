"""The background review's one-line notice reaches the chat after the reply."""

from __future__ import annotations

from gateway_support import eventually

from herald.engine.review import REVIEW_MARK
from herald.testing.fake_llm import Reply, ToolCallSpec


def is_review(req) -> bool:
    return any(REVIEW_MARK in (m.get("content") or "") for m in req.messages if m["role"] == "user")


async def test_what_the_reviewer_learned_is_posted_in_the_chat(start_gateway, fake_llm) -> None:
    def handler(req):
        if is_review(req):
            if req.messages[-1]["role"] == "user":
                return Reply.tool_calls(
                    [
                        ToolCallSpec(
                            "memory",
                            {"action": "add", "target": "user", "content": "Likes short answers."},
                        )
                    ]
                )
            return Reply.text("saved one memory")
        return Reply.text("A long, rambling answer.")

    fake_llm.set_handler(handler)
    _runner, chat = await start_gateway(extra={"learning": {"enabled": True}})
    result = await chat.inject("That's too verbose, stop doing that.")
    assert result.status == "replied" and chat.texts()[0] == "A long, rambling answer."
    await eventually(lambda: len(chat.texts()) == 2, timeout=20)
    assert chat.texts()[1] == "Learned: saved 1 memory."
