"""The spend governor against the fake LLM server: every cap ends a turn with
`spend_limit_reached` before the call is made, says which cap and how to raise it,
loses nothing, lets the session resume once raised, and warns once per period."""

from __future__ import annotations

import pytest

from herald.engine import ExitReason, TurnCallbacks
from herald.testing.fake_llm import FakeUsage, Reply

# Output costs $1000 per million tokens and input nothing, and every call is assumed
# to produce 1000 tokens, so the estimate before a call equals what it then costs: $1.
PRICED = {
    # A window so large that the reported 100k prompt tokens never trigger a compression.
    "model": {
        "pricing": {"input_per_mtok": 0, "output_per_mtok": 1000},
        "context_length": 10_000_000,
    },
    "budget": {"output_estimate_tokens": 1000},
}
USAGE = FakeUsage(prompt_tokens=100_000, completion_tokens=1000)  # $1.00, 101k tokens


def config(**budget) -> dict:
    return {**PRICED, "budget": {**PRICED["budget"], **budget}}


def answer(text: str = "ok") -> Reply:
    return Reply.text(text, usage=USAGE)


CAPS = [
    ("daily_usd", {"daily_usd": 1.5}, "today"),
    ("monthly_usd", {"monthly_usd": 1.5}, "this month"),
    ("session_usd", {"session_usd": 1.5}, "this session"),
    ("daily_tokens", {"daily_tokens": 50_000}, "today"),
    ("session_tokens", {"session_tokens": 50_000}, "this session"),
    ("per_source.cli.daily_usd", {"per_source": {"cli": {"daily_usd": 1.5}}}, "today on cli"),
]


@pytest.mark.parametrize(("key", "budget", "scope"), CAPS, ids=[c[0] for c in CAPS])
def test_cap_ends_the_turn_before_the_call_and_resumes_when_raised(
    make_agent, fake_llm, key, budget, scope
):
    fake_llm.enqueue(answer("first"))
    agent = make_agent(config=config(**budget), enabled_tools=("todo",))
    first = agent.run_turn("hello")
    assert first.exit_reason is ExitReason.TEXT_RESPONSE

    refused = agent.run_turn("and again")
    assert refused.exit_reason is ExitReason.SPEND_LIMIT_REACHED
    assert len(fake_llm.model_requests()) == 1  # the refused call was never sent
    assert f"budget.{key}" in refused.error
    assert refused.spend_cap == f"budget.{key}"
    assert f"was spent {scope}" in refused.error
    assert f"herald config set budget.{key}" in refused.error
    # Nothing lost: the refused turn's message is stored and comes back on resume.
    stored = [m.content for m in agent.store.get_messages(first.session_id)]
    assert stored == ["hello", "first", "and again"]
    assert agent.store.get_session(first.session_id).last_exit_reason == "spend_limit_reached"

    raised = {k: (v * 10 if isinstance(v, int | float) else v) for k, v in budget.items()}
    if "per_source" in raised:
        raised = {"per_source": {"cli": {"daily_usd": 15}}}
    fake_llm.enqueue(answer("back"))
    resumed = make_agent(
        config=config(**raised), session_id=first.session_id, enabled_tools=("todo",)
    )
    again = resumed.run_turn("still there?")
    assert again.exit_reason is ExitReason.TEXT_RESPONSE and again.final_text == "back"
    sent = fake_llm.model_requests()[-1].messages
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "hello",
        "and again",
        "still there?",
    ]


@pytest.mark.parametrize(
    ("budget", "key"),
    [({"turn_usd": 1.5}, "turn_usd"), ({"turn_tokens": 50_000}, "turn_tokens")],
)
def test_turn_cap_stops_a_busy_turn_and_the_next_turn_starts_afresh(
    make_agent, fake_llm, budget, key
):
    todo = {"todos": [{"id": "1", "content": "x", "status": "pending"}]}
    fake_llm.enqueue(Reply.tool_call("todo", todo, usage=USAGE), answer("never sent"))
    agent = make_agent(config=config(**budget), enabled_tools=("todo",))
    result = agent.run_turn("plan")
    assert result.exit_reason is ExitReason.SPEND_LIMIT_REACHED
    assert f"budget.{key}" in result.error and "this turn" in result.error
    assert len(fake_llm.model_requests()) == 1
    roles = [m.role for m in agent.store.get_messages(result.session_id)]
    assert roles == ["user", "assistant", "tool"]  # the tool round is kept

    nxt = agent.run_turn("go on")  # a new turn has its own allowance
    assert nxt.exit_reason is ExitReason.TEXT_RESPONSE


def test_warnings_fire_once_each_per_period(make_agent, fake_llm):
    statuses: list[str] = []
    callbacks = TurnCallbacks(on_status=statuses.append)
    for n in range(4):
        fake_llm.enqueue(answer(f"a{n}"))
    agent = make_agent(config=config(daily_usd=4), enabled_tools=("todo",), callbacks=callbacks)
    for n in range(4):
        assert agent.run_turn(f"q{n}").exit_reason is ExitReason.TEXT_RESPONSE
    warnings = [s for s in statuses if s.startswith("spend:")]
    # Before the calls $0, $1, $2 (50%), $3 (75%) were spent.
    assert warnings == [
        "spend: 50% of budget.daily_usd used today ($2.00 of $4.00)",
        "spend: 75% of budget.daily_usd used today ($3.00 of $4.00)",
    ]
    refused = agent.run_turn("q4")
    assert refused.exit_reason is ExitReason.SPEND_LIMIT_REACHED

    # Another agent on the same home, same day, cap raised to $8: $4 is 50% again,
    # but that warning was already given today.
    later: list[str] = []
    fake_llm.enqueue(answer("more"))
    other = make_agent(
        config=config(daily_usd=8),
        enabled_tools=("todo",),
        callbacks=TurnCallbacks(on_status=later.append),
    )
    assert other.run_turn("new session").exit_reason is ExitReason.TEXT_RESPONSE
    assert [s for s in later if s.startswith("spend:")] == []


def test_local_models_cost_nothing_and_config_prices_custom_ones(make_agent, fake_llm):
    from herald.providers import Usage, estimate_cost

    assert estimate_cost("local", "qwen", Usage(prompt_tokens=10**6)) == 0.0
    assert estimate_cost("custom", "mine", Usage(prompt_tokens=10**6)) is None
    fake_llm.enqueue(answer())
    agent = make_agent(config=PRICED, enabled_tools=("todo",))
    result = agent.run_turn("price me")
    assert result.estimated_cost_usd == pytest.approx(1.0)
    assert agent.store.list_usage(result.session_id)[0].cost_usd == pytest.approx(1.0)


def test_a_compression_summary_is_not_called_past_a_cap(make_agent, fake_llm):
    # Long answers: a compression that would not shrink the history is never applied.
    fake_llm.enqueue(*(answer(f"a{n} " + "w" * 4000) for n in range(4)))
    agent = make_agent(config=config(daily_usd=5.5), enabled_tools=("todo",))
    for n in range(4):
        agent.run_turn(f"q{n}")  # $4 spent; a summary's estimate (2000 tokens out) is $2
    sent = len(fake_llm.model_requests())
    assert agent.compress_now()  # the compressor falls back to its own summary
    assert len(fake_llm.model_requests()) == sent  # the summarizer was never called
