"""Who a turn's words are from: the owner's are `owner`; another identity's chat message,
a mail from anyone but the owner (labelled with its sender's address) and a webhook
delivery are untrusted, stored clean and sent fenced, and cannot name the
target of a consequential call on their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from herald.engine import ExitReason
from herald.testing.fake_llm import Reply

IDENTITIES = {"identities": {"dana": {"role": "member", "accounts": ["telegram:67890"]}}}


def write_what_the_user_names(target: str):
    def handler(req):
        if req.messages[-1]["role"] == "user":
            return Reply.tool_call("write_file", {"path": target, "content": "hello"})
        return Reply.text("done")

    return handler


@pytest.mark.parametrize(
    ("options", "label"),
    [
        ({}, "owner"),
        ({"identity": "dana"}, "untrusted:chat:dana"),
        ({"source": "webhook", "origin": "webhook:deploys"}, "untrusted:webhook:deploys"),
        (
            {"source": "email", "identity": "dana", "origin": "email:dana@example.org:<r@x>"},
            "untrusted:email:dana@example.org",
        ),
    ],
    ids=["owner", "another identity", "webhook", "email from someone else"],
)
def test_the_user_message_is_labelled_by_who_sent_it(
    make_agent, fake_llm, tmp_path, options, label
):
    target = str(tmp_path / "work" / "from-the-message.txt")
    fake_llm.set_handler(write_what_the_user_names(target))
    agent = make_agent(config=IDENTITIES, enabled_tools=("write_file",), **options)
    result = agent.start_turn(f"please write hello to {target}").result(timeout=60)
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    user_row = next(r for r in agent.store.get_messages(result.session_id) if r.role == "user")
    assert user_row.provenance == label
    assert user_row.content == f"please write hello to {target}"  # stored clean
    sent = fake_llm.model_requests()[0].messages[-1]["content"]
    tool_result = [m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool"][-1]
    if label == "owner":
        assert sent == user_row.content
        assert Path(target).read_text() == "hello"
    else:
        assert sent.startswith("<untrusted-content id=") and label.split(":", 1)[1] in sent
        assert not Path(target).exists()
        assert (
            "Not run" in tool_result["content"] and label.split(":", 1)[1] in tool_result["content"]
        )
