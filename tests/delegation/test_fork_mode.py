"""Fork mode: children continue the parent's exact request, so their requests share a
byte-identical prefix (system prompt, tools, history, placeholders) up to the directive,
and that prefix is the parent's own request."""

from __future__ import annotations

import json

from herald.delegation import FORK_PLACEHOLDER
from herald.engine import ExitReason
from herald.testing.fake_llm import Reply
from herald.testing.transcript_checks import transcript_problems

DIRECTIVE = "[Herald: you are sub-agent"


def is_fork_child(request) -> bool:
    return (request.last_user_text or "").startswith(DIRECTIVE)


def fork_call(*goals: str) -> Reply:
    return Reply.tool_call("delegate_task", {"mode": "fork", "tasks": [{"goal": g} for g in goals]})


def canonical(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=False).encode()


def test_fork_children_share_the_parents_request_prefix_byte_for_byte(make_agent, fake_llm):
    fake_llm.set_handler(lambda r: Reply.text("forked answer") if is_fork_child(r) else None)
    fake_llm.enqueue(
        Reply.text("warming up"),  # an earlier turn: the history the children inherit
        fork_call("check module a", "check module b", "check module c"),
        Reply.text("merged"),
    )
    agent = make_agent()
    agent.start_turn("first question").result(timeout=30)
    result = agent.start_turn("now fan out").result(timeout=60)
    assert result.exit_reason is ExitReason.TEXT_RESPONSE

    requests = fake_llm.model_requests()
    children = [r for r in requests if is_fork_child(r)]
    parents = [r for r in requests if not is_fork_child(r)]
    assert len(children) == 3
    calling, answered = parents[1], parents[2]  # the request that called delegate_task, the next

    # Every child: the same body up to its last message (the directive), byte for byte.
    prefixes = {canonical(c.messages[:-1]) for c in children}
    assert len(prefixes) == 1
    assert len({canonical(c.tools) for c in children}) == 1
    assert len({c.model for c in children}) == 1
    directives = [c.messages[-1]["content"] for c in children]
    assert len(set(directives)) == 3 and all(d.startswith(DIRECTIVE) for d in directives)
    # The raw bodies agree up to the directive too (the wire bytes the cache sees).
    raws = [c.raw for c in children]
    common = 0
    while all(len(r) > common for r in raws) and len({r[common] for r in raws}) == 1:
        common += 1
    cut = raws[0].index(json.dumps(directives[0][:20], ensure_ascii=False)[1:-1].encode())
    last_message = raws[0].rindex(b'{"role":', 0, cut)  # where the directive's message starts
    assert raws[0][:last_message].startswith(b'{"model":')  # the body puts messages before tools
    assert common > last_message  # every byte before the directive's message is shared

    # That prefix is the parent's request: its system prompt, tools and history, plus the
    # assistant message that called delegate_task, plus one placeholder per call.
    child = children[0]
    assert child.system == calling.system
    assert canonical(child.tools) == canonical(calling.tools)
    n = len(calling.messages)
    assert canonical(child.messages[:n]) == canonical(calling.messages)
    assert canonical(child.messages[: n + 1]) == canonical(answered.messages[: n + 1])
    assistant = child.messages[n]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["function"]["name"] == (
        "delegate_task"
    )
    placeholder = child.messages[n + 1]
    assert placeholder == {
        "role": "tool",
        "tool_call_id": assistant["tool_calls"][0]["id"],
        "content": FORK_PLACEHOLDER,
    }
    assert not transcript_problems(child.messages)

    results = json.loads([m for m in answered.messages if m["role"] == "tool"][-1]["content"])
    assert results["mode"] == "fork"
    assert [r["final_text"] for r in results["results"]] == ["forked answer"] * 3


def test_a_fork_child_asking_to_delegate_is_refused_at_call_time(make_agent, fake_llm):
    def child(request):
        if not is_fork_child(request):
            return None
        if request.messages[-1]["role"] == "user":
            return fork_call("deeper")
        return Reply.text("refused, did it myself")

    fake_llm.set_handler(child)
    fake_llm.enqueue(fork_call("only one"), Reply.text("done"))
    agent = make_agent(config={"delegation": {"max_depth": 3}})  # depth alone would allow it
    agent.start_turn("go").result(timeout=60)
    second = [r for r in fake_llm.model_requests() if is_fork_child(r)][-1]
    # Its tool list is the parent's (delegate_task included) ...
    assert "delegate_task" in {t["function"]["name"] for t in second.tools}
    # ... but the call was refused.
    refusal = second.messages[-1]["content"]
    assert refusal.startswith("[TOOL_ERROR]") and "fork-mode sub-agent cannot delegate" in refusal
    assert sum(1 for r in fake_llm.model_requests() if is_fork_child(r)) == 2


def test_fork_mode_refuses_another_model(make_agent, fake_llm):
    fake_llm.enqueue(
        Reply.tool_call(
            "delegate_task", {"mode": "fork", "tasks": [{"goal": "x", "model": "other"}]}
        ),
        Reply.text("ok"),
    )
    agent = make_agent()
    agent.start_turn("go").result(timeout=30)
    content = fake_llm.model_requests()[-1].messages[-1]["content"]
    assert content.startswith("[TOOL_ERROR]") and "fork mode keeps the parent's model" in content
