"""Every fault class the fake server can inject ends the turn with its named exit
reason, or is recovered from (retry, rotate, fall back) as the classifier says."""

from __future__ import annotations

import pytest

from herald.engine import ExitReason, IterationBudget
from herald.testing.fake_llm import FakeLLMServer, Fault, Reply
from herald.testing.homes import merge
from herald.testing.transcript_checks import transcript_problems


@pytest.fixture(params=["lean", "sdk"])
def make_agent(request, make_agent):
    """Every test here runs on both `model.transport` implementations."""

    def make(*, config=None, **kw):
        return make_agent(config=merge({"model": {"transport": request.param}}, config or {}), **kw)

    return make


OK = Reply.text("recovered")
TODO_CALL = Reply.tool_call("todo", {"todos": [{"id": "1", "content": "x", "status": "pending"}]})

# (id, api, script, config, expected exit, expected number of HTTP requests)
SCENARIOS = [
    ("429-then-ok", "openai", [Fault.status(429), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    ("429-forever", "openai", [Fault.status(429)] * 6, {}, ExitReason.ALL_RETRIES_EXHAUSTED, 4),
    ("500-then-ok", "openai", [Fault.status(500), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    ("503-then-ok", "anthropic", [Fault.status(503), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    ("529-overloaded", "anthropic", [Fault.status(529), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    (
        "timeout-then-ok",
        "openai",
        [Fault.timeout(5), OK],
        {"model": {"timeout": 0.5}},
        ExitReason.TEXT_RESPONSE,
        2,
    ),
    ("closed-then-ok", "openai", [Fault.close_connection(), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    ("cut-stream", "openai", [Fault.drop_mid_stream(2), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    ("cut-stream-a", "anthropic", [Fault.drop_mid_stream(2), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    ("malformed", "openai", [Fault.malformed_json(), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    ("empty-then-ok", "openai", [Fault.empty_choices(), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    (
        "empty-forever",
        "anthropic",
        [Fault.empty_choices()] * 5,
        {},
        ExitReason.EMPTY_RESPONSE_EXHAUSTED,
        3,
    ),
    ("no-stream-server", "openai", [Fault.refuse_stream(), OK], {}, ExitReason.TEXT_RESPONSE, 2),
    (
        "overflow-openai",
        "openai",
        [Fault.context_overflow()],
        {},
        ExitReason.CONTEXT_OVERFLOW_UNRECOVERABLE,
        1,
    ),
    (
        "overflow-anthropic",
        "anthropic",
        [Fault.context_overflow()],
        {},
        ExitReason.CONTEXT_OVERFLOW_UNRECOVERABLE,
        1,
    ),
    ("413", "openai", [Fault.status(413)], {}, ExitReason.CONTEXT_OVERFLOW_UNRECOVERABLE, 1),
    ("policy", "openai", [Fault.content_policy()], {}, ExitReason.CONTENT_POLICY_BLOCKED, 1),
    ("policy-a", "anthropic", [Fault.content_policy()], {}, ExitReason.CONTENT_POLICY_BLOCKED, 1),
    ("401-one-key", "openai", [Fault.status(401)], {}, ExitReason.AUTH_FAILED, 1),
    ("402-no-credit", "openai", [Fault.status(402)], {}, ExitReason.OUT_OF_CREDIT, 1),
    ("400-invalid", "anthropic", [Fault.status(400)], {}, ExitReason.INVALID_REQUEST, 1),
    ("404-no-fallback", "openai", [Fault.status(404)], {}, ExitReason.MODEL_NOT_FOUND, 1),
    (
        "500-no-budget-left",
        "openai",
        [Fault.status(500), OK],
        {"agent": {"max_iterations": 1}},
        ExitReason.ERROR_NEAR_MAX_ITERATIONS,
        1,
    ),
]


@pytest.mark.parametrize(
    ("api", "script", "config", "expected", "requests"),
    [pytest.param(*s[1:], id=s[0]) for s in SCENARIOS],
)
def test_fault_ends_with_named_reason_or_recovers(
    make_agent, fake_llm, api, script, config, expected, requests
):
    fake_llm.enqueue(*script)
    agent = make_agent(api=api, config=config)
    result = agent.run_turn("hello")
    assert result.exit_reason is expected, result.error
    assert len(fake_llm.model_requests()) == requests
    if expected is ExitReason.TEXT_RESPONSE:
        assert result.final_text == "recovered"
    else:
        assert result.error, "a failed turn says why"
        assert not result.completed
    session = agent.store.get_session(result.session_id)
    assert session.last_exit_reason == expected.value


def test_every_exit_reason_is_reachable_and_none_is_unknown():
    """The scenario table plus the dedicated tests below cover every named exit;
    `unknown` is never a legitimate outcome."""
    covered = {s[4] for s in SCENARIOS} | {
        ExitReason.INTERRUPTED_BY_USER,  # test_interrupt_between_tools
        ExitReason.INTERRUPTED_DURING_API_CALL,  # test_interrupt_while_streaming
        ExitReason.MAX_ITERATIONS_REACHED,  # test_budget_exhaustion_asks_for_a_summary
        ExitReason.BUDGET_EXHAUSTED,  # test_parent_budget_exhaustion
        ExitReason.PERSISTENCE_FAILED,  # test_persistence_failure_stops_the_turn
        ExitReason.GUARDRAIL_HALT,  # tests/tools (the guardrail controller)
        ExitReason.OUTPUT_TRUNCATED,  # test_model_call_outcomes (finish_reason length)
        ExitReason.MISSING_EXTRA,  # test_model_call_outcomes (no local extra)
        ExitReason.TLS_FAILED,  # test_model_call_outcomes (self-signed server)
        ExitReason.MODEL_CALL_FAILED,  # test_model_call_outcomes (unclassifiable error)
        ExitReason.SPEND_LIMIT_REACHED,  # tests/engine/test_spend_governor.py
    }
    assert covered == set(ExitReason) - {ExitReason.UNKNOWN}


def test_auth_failure_rotates_to_the_next_key(make_agent, fake_llm):
    fake_llm.enqueue(Fault.status(401), OK)
    agent = make_agent(env={"OPENAI_API_KEY": "sk-first", "OPENAI_API_KEY_2": "sk-second"})
    result = agent.run_turn("hi")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    auth = [r.headers.get("authorization") for r in fake_llm.model_requests()]
    assert auth == ["Bearer sk-first", "Bearer sk-second"]


def test_fallback_rewrites_identity_only_for_that_request(make_agent, fake_llm):
    with FakeLLMServer() as backup:
        backup.enqueue(Reply.text("from backup"))
        fake_llm.enqueue(Fault.status(404, "The model `fake-gpt` does not exist"))
        config = {
            "model": {
                "fallbacks": [
                    {
                        "provider": "custom",
                        "name": "backup-model",
                        "base_url": backup.openai_base_url,
                    }
                ]
            }
        }
        agent = make_agent(config=config)
        result = agent.run_turn("hi")
        assert result.exit_reason is ExitReason.TEXT_RESPONSE
        assert result.final_text == "from backup"
        main_prompt = fake_llm.model_requests()[0].system
        backup_prompt = backup.model_requests()[0].system
        assert "Model: fake-gpt" in main_prompt
        assert "Model: backup-model" in backup_prompt and "Model: fake-gpt" not in backup_prompt
        assert (
            backup_prompt.replace("backup-model", "fake-gpt").replace(
                "Provider: custom", "Provider: openai"
            )
            == main_prompt
        )
        session = agent.store.get_session(result.session_id)
        assert agent.store.get_system_prompt(session.system_prompt_hash) == main_prompt


def test_interrupt_while_streaming(make_agent, fake_llm):
    import threading

    fake_llm.enqueue(Reply.text("x" * 400, chunk_size=1, chunk_delay=0.02))
    agent = make_agent()
    timer = threading.Timer(0.3, agent.interrupt)
    timer.start()
    result = agent.run_turn("talk for a while")
    timer.cancel()
    assert result.exit_reason is ExitReason.INTERRUPTED_DURING_API_CALL
    roles = [m.role for m in agent.store.get_messages(result.session_id)]
    assert roles == ["user"]  # the half-streamed answer is not kept
    fake_llm.enqueue(OK)
    follow_up = agent.run_turn("never mind")
    assert follow_up.exit_reason is ExitReason.TEXT_RESPONSE


def test_interrupt_between_tools(make_agent, fake_llm):
    from herald.testing.fake_llm import ToolCallSpec

    fake_llm.enqueue(
        Reply.tool_calls(
            [
                ToolCallSpec("todo", {"todos": []}, id="call_a"),
                ToolCallSpec("todo", {"todos": []}, id="call_b"),
            ]
        ),
        OK,
    )
    agent = make_agent()
    agent.callbacks.on_tool_end = lambda *_: agent.interrupt()
    result = agent.run_turn("do two things")
    assert result.exit_reason is ExitReason.INTERRUPTED_BY_USER
    rows = agent.store.get_messages(result.session_id)
    tool_rows = [m for m in rows if m.role == "tool"]
    assert [m.tool_call_id for m in tool_rows] == ["call_a", "call_b"]
    assert "cancelled" in tool_rows[1].content
    agent.callbacks.on_tool_end = None
    assert agent.run_turn("continue").exit_reason is ExitReason.TEXT_RESPONSE
    assert not transcript_problems(fake_llm.model_requests()[-1].messages)


def test_budget_exhaustion_asks_for_a_summary(make_agent, fake_llm):
    fake_llm.set_handler(lambda req: TODO_CALL if req.tools else Reply.text("summary of progress"))
    agent = make_agent(max_iterations=3)
    result = agent.run_turn("loop forever")
    assert result.exit_reason is ExitReason.MAX_ITERATIONS_REACHED
    assert result.final_text == "summary of progress"
    requests = fake_llm.model_requests()
    assert len(requests) == 4
    assert requests[-1].tools is None and all(r.tools for r in requests[:3])
    assert not transcript_problems(requests[-1].messages)


def test_parent_budget_exhaustion(make_agent, fake_llm):
    fake_llm.set_handler(lambda req: TODO_CALL if req.tools else Reply.text("partial"))
    parent = IterationBudget(2)
    agent = make_agent(max_iterations=10, parent_budget=parent)
    result = agent.run_turn("work")
    assert result.exit_reason is ExitReason.BUDGET_EXHAUSTED
    assert parent.used == 2


def test_persistence_failure_stops_the_turn(make_agent, fake_llm):
    from herald.tools import ToolRegistry

    registry = ToolRegistry()
    holder: list = []
    registry.register(
        "close_store",  # the disk goes away under the running turn
        "test",
        {"description": "closes the store", "parameters": {"type": "object"}},
        lambda _a, _c: holder[0].store.close() or "closed",
    )
    fake_llm.enqueue(Reply.tool_call("close_store", {}), OK)
    agent = make_agent(registry=registry, enabled_tools=("close_store",))
    holder.append(agent)
    result = agent.run_turn("break it")
    assert result.exit_reason is ExitReason.PERSISTENCE_FAILED
    assert "closed" in result.error
    assert len(fake_llm.model_requests()) == 1  # nothing ran unrecorded after the failure


def test_a_stop_just_before_the_turn_starts_still_stops_it(make_agent, fake_llm):
    fake_llm.default_reply = OK
    agent = make_agent()
    agent.interrupt()  # e.g. /stop racing the turn's start in the gateway
    result = agent.run_turn("hello")
    assert result.exit_reason is ExitReason.INTERRUPTED_BY_USER
    assert fake_llm.model_requests() == []
    assert agent.run_turn("again").exit_reason is ExitReason.TEXT_RESPONSE  # flag cleared


def test_a_server_trickling_keepalives_cannot_hold_a_turn(make_agent, fake_llm):
    # 200 at once, then only SSE comments for 30 s: model.timeout (0.5 s) ends each
    # attempt, the retry gets the same, and the turn ends naming the timeout.
    fake_llm.enqueue(
        Fault.keepalive_stall(30, interval=0.05), Fault.keepalive_stall(30, interval=0.05)
    )
    agent = make_agent(config={"model": {"timeout": 0.5}, "agent": {"max_retries": 1}})
    result = agent.run_turn("hello")
    assert result.exit_reason is ExitReason.ALL_RETRIES_EXHAUSTED
    assert "model.timeout" in result.error
    assert len(fake_llm.model_requests()) == 2
