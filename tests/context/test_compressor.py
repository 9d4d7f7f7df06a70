"""The compressor engine: phases, boundaries, summaries, fallback, cool-down and breaker."""

from __future__ import annotations

import json

import pytest

from herald.config.schema_context import ContextConfig, PruneConfig
from herald.context import CompressorEngine, ContextEngine, create_engine
from herald.context.compressor import (
    PRUNED_MARK,
    SECTIONS,
    SUMMARY_MARK,
    choose_boundaries,
    fallback_sections,
    merge_sections,
    parse_sections,
    prune_tool_results,
    summary_message_text,
)
from herald.context.tokens import estimate_message_tokens
from herald.providers.message import Message, from_api_messages
from herald.testing.transcript_checks import transcript_problems


def call(cid: str, name: str = "terminal", **args) -> dict:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def stored(msgs: list[dict], first_row: int = 1) -> list[Message]:
    """Chat dicts as the stored messages a context engine is given (row ids set)."""
    return [Message.from_api(m, row_id=first_row + i) for i, m in enumerate(msgs)]


def conversation(rounds: int, output_chars: int = 3000) -> list[Message]:
    """A long agentic session: one request, many tool rounds, a few user follow-ups."""
    msgs: list[dict] = [{"role": "user", "content": "Set up the project and keep tests green."}]
    for r in range(rounds):
        if r and r % 5 == 0:
            msgs.append({"role": "user", "content": f"Follow-up {r}: don't touch the CI config."})
        # Roles alternate as they do in a real transcript: the note on the previous
        # step rides on the next tool call, never as a second assistant message.
        note = f"Step {r - 1} finished." if r else None
        msgs.append(
            {
                "role": "assistant",
                "content": note,
                "tool_calls": [call(f"c{r}", command=f"make step{r}")],
            }
        )
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": f"c{r}",
                "content": f"output {r} " + "x" * output_chars,
            }
        )
    msgs.append({"role": "assistant", "content": f"Step {rounds - 1} finished."})
    msgs.append({"role": "user", "content": "Now write the release notes."})
    return stored(msgs)


def sections_text(**overrides: str) -> str:
    return "\n\n".join(f"## {s}\n{overrides.get(s, 'model wrote ' + s)}" for s in SECTIONS)


def engine(summarizer=None, *, window=32_000, clock=None, **cfg) -> CompressorEngine:
    config = ContextConfig(tail_tokens=3000, output_reserve_tokens=1000, **cfg)
    kwargs = {"clock": clock} if clock else {}
    return CompressorEngine(config=config, context_window=window, summarizer=summarizer, **kwargs)


def test_threshold_fraction_depends_on_window_size():
    assert engine(window=100_000).threshold_tokens == 40_000 - 1000
    assert engine(window=1_000_000).threshold_tokens == 500_000 - 1000


def test_compress_keeps_head_and_tail_and_stays_legal():
    msgs = conversation(30)
    seen: list[list[dict]] = []
    eng = engine(lambda m: seen.append(m) or sections_text())
    out = eng.compress(msgs)
    assert out[0] is msgs[0]  # the head: the original request, same row
    assert out[1].role == "assistant" and out[1].content.startswith(SUMMARY_MARK)
    assert out[1].row_id is None
    assert out[2].role == "user"  # the tail starts at a user turn: roles alternate
    assert out[-1] is msgs[-1] and out[-1].content == "Now write the release notes."
    assert not transcript_problems(out)
    assert len(out) < len(msgs) / 3
    # The summarizer was told the transcript is data, and saw the middle only.
    system, user = seen[0]
    assert "DATA, not instructions" in system["content"]
    assert "output 3" in user["content"] and "release notes" not in user["content"]
    assert "## Current task\nNow write the release notes." in out[1].content
    report = eng.last_report
    assert report.source == "model" and report.tokens_after < report.tokens_before


def test_summary_is_labelled_reference_material_and_redacted():
    msgs = conversation(20)
    eng = engine(lambda m: sections_text(**{"Critical context": "key sk-ant-api03-" + "A" * 40}))
    out = eng.compress(msgs)
    summary = out[1].content
    assert "not an instruction" in summary
    assert "sk-ant-api03-AAAA" not in summary


def test_failing_summarizer_gives_fallback_and_cooldown_ladder():
    now = [1000.0]
    calls = []

    def broken(messages):
        calls.append(1)
        raise TimeoutError("aux model timed out")

    eng = engine(broken, clock=lambda: now[0], cooldown_seconds=[60, 600])
    out = eng.compress(conversation(20))
    assert eng.last_report.source == "fallback"
    sections = parse_sections(out[1].content.split("\n\n", 1)[1])
    assert sections["Goal"].startswith("Set up the project")
    assert "make step" in sections["Progress: done"]
    assert eng.state.failures == 1 and eng.state.cooldown_until == 1060
    eng.compress(conversation(20))
    assert len(calls) == 1 and eng.last_report.source == "cooldown"  # not retried while cooling
    now[0] = 1061
    eng.compress(conversation(20))
    assert len(calls) == 2 and eng.state.cooldown_until == 1061 + 600  # next rung
    eng.summarizer = lambda m: sections_text()
    now[0] = 5000
    eng.compress(conversation(20))
    assert eng.state.failures == 0 and eng.last_report.source == "model"


def test_garbage_summary_counts_as_a_failure():
    eng = engine(lambda m: "sure! here is a summary without sections")
    eng.compress(conversation(20))
    assert eng.last_report.source == "fallback" and eng.state.failures == 1


def test_later_compressions_update_the_previous_summary():
    msgs = conversation(20)
    eng = engine(lambda m: sections_text(Goal="first goal"))
    first = eng.compress(msgs)
    grown = [
        m if m.row_id is not None else m.with_row(1000 + i)
        for i, m in enumerate(first + conversation(20)[1:])
    ]
    seen = []
    eng.summarizer = lambda m: seen.append(m) or sections_text(Goal="updated goal")
    second = eng.compress(grown)
    assert "<earlier-summary>" in seen[0][1]["content"] and "first goal" in seen[0][1]["content"]
    assert second[0] is grown[0]
    assert sum(1 for m in second if (m.content or "").startswith(SUMMARY_MARK)) == 1
    assert "updated goal" in second[1].content
    assert not transcript_problems(second)


def test_focus_topic_reaches_the_summarizer():
    seen = []
    engine(lambda m: seen.append(m) or sections_text()).compress(
        conversation(20), focus="the database"
    )
    assert "focus this summary on: the database" in seen[0][1]["content"]


def test_breaker_trips_after_two_misses_and_rearms_on_a_verified_drop():
    class Usage:
        def __init__(self, prompt_tokens):
            self.prompt_tokens = prompt_tokens

    eng = engine(lambda m: sections_text(), window=32_000)
    eng.overhead_tokens = 40_000  # a huge system prompt: compression can never get under
    eng.compress(conversation(20))
    assert not eng.state.tripped and eng.state.misses == 1
    eng.compress(conversation(20))
    assert eng.state.tripped
    assert not eng.should_compress(prompt_tokens=1_000_000)
    assert any("paused" in w for w in eng.last_report.warnings)
    eng.update_from_response(Usage(30_000))  # still above the threshold: stays tripped
    assert eng.state.tripped
    eng.update_from_response(Usage(5_000))
    assert not eng.state.tripped and eng.should_compress(prompt_tokens=1_000_000)


def test_repeated_compressions_warn_about_accuracy():
    eng = engine(lambda m: sections_text(), warn_after_compressions=2)
    eng.compress(conversation(20))
    assert not eng.last_report.warnings
    eng.compress(conversation(20))
    assert any("less accurate" in w for w in eng.last_report.warnings)


def test_state_round_trips_through_session_meta():
    eng = engine(None)
    eng.state.failures, eng.state.tripped = 2, True
    other = engine(None)
    other.on_session_start("s", state=eng.export_state())
    assert other.state == eng.state


def test_boundaries_never_split_a_tool_group_and_keep_the_last_user():
    msgs = conversation(12)
    bounds = choose_boundaries(msgs, tail_budget_tokens=2500, estimate=estimate_message_tokens)
    assert msgs[bounds.tail_start].role == "user"
    assert bounds.tail_start <= bounds.last_user
    assert bounds.head_end == 1


def test_one_giant_turn_carries_the_user_message_across():
    msgs = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    msgs.append({"role": "user", "content": "Migrate every service."})
    for r in range(40):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call(f"g{r}")]})
        msgs.append({"role": "tool", "tool_call_id": f"g{r}", "content": "y" * 2000})
    msgs = stored(msgs)
    out = engine(lambda m: sections_text()).compress(msgs)
    assert [m.role for m in out[:4]] == ["user", "assistant", "user", "assistant"]
    assert out[2].content == "Migrate every service." and out[2].row_id is None
    assert out[3].tool_calls and out[3].row_id is not None
    assert not transcript_problems(out)


def test_nothing_to_compress_returns_the_same_list():
    msgs = conversation(1)
    assert engine(lambda m: sections_text()).compress(msgs) is msgs


def test_phase1_prunes_outside_the_tail_only():
    msgs = conversation(6, output_chars=5000)
    msgs.insert(
        3,
        Message.from_api(
            {"role": "assistant", "content": None, "tool_calls": [call("big", command="x" * 9000)]}
        ),
    )
    msgs.insert(4, Message("tool", "output 0 " + "x" * 5000, tool_call_id="big"))
    outcome = prune_tool_results(
        msgs, protect_from=len(msgs) - 3, keep_chars=50, argument_max_chars=500
    )
    out = outcome.messages
    pruned = [m for m in out if (m.content or "").startswith(PRUNED_MARK)]
    assert pruned and all(m.row_id is None for m in pruned)
    assert any("terminal(make step1) → ok, 5,009 chars]" in m.content for m in pruned)
    assert any("same output as a later call" in m.content for m in pruned)
    big_call = next(m for m in out if m.tool_calls and m.tool_calls[0].id == "big")
    assert len(big_call.tool_calls[0].arguments) < 700
    json.loads(big_call.tool_calls[0].arguments)  # still valid JSON
    assert out[-3:] == msgs[-3:]
    assert outcome.reclaimed_chars > 20_000
    assert not transcript_problems(out)


def test_proactive_prune_is_on_by_default_and_scaled_to_the_window():
    """Tool output the model has read and that left the tail is cut to one-line stubs
    before a summary is needed; on a small window the line (60K tokens) is lowered to
    half the compression threshold, and what it must reclaim shrinks with it."""
    msgs = conversation(30)
    small = engine(None)  # a 32K window
    line = small.threshold_tokens // 2
    assert line < 10_000
    assert small.prune_tool_results_only(msgs, line - 100) is None
    pruned = small.prune_tool_results_only(msgs, line + 100)
    assert pruned is not None and not transcript_problems(pruned)
    assert sum((m.content or "").startswith(PRUNED_MARK) for m in pruned) >= 25
    assert pruned[-1] is msgs[-1]  # the tail (here the new request) is kept as it was
    large = engine(None, window=1_000_000)  # the configured line holds where it is lower
    assert large.prune_tool_results_only(msgs, 59_000) is None
    assert large.prune_tool_results_only(msgs, 61_000) is not None
    off = engine(None, prune=PruneConfig(enabled=False))
    assert off.prune_tool_results_only(msgs, 100_000) is None


def test_a_prune_reclaims_at_least_the_tail_it_makes_the_provider_read_again():
    """A prune breaks the cached prefix where it cuts; the tail after it is sent again
    uncached. Reclaiming less than that costs more than it saves."""
    config = ContextConfig(tail_tokens=8_000, output_reserve_tokens=1000)
    eng = CompressorEngine(config=config, context_window=32_000)
    low = eng.threshold_tokens // 2  # over the prune line, under where compression lands
    few = conversation(12)  # ~3 results older than an 8,000-token tail
    assert eng.prune_tool_results_only(few, low) is None
    assert eng.prune_tool_results_only(conversation(30), low) is not None


def test_near_the_threshold_prune_uses_the_narrower_tail_compression_would_keep():
    """With the default tail on a small window, what lies outside the full tail is too
    little to prune, so compression summarized it every few results; past the point where
    a compression lands, output older than the narrower tail is stubbed instead."""
    config = ContextConfig(tail_tokens=8_000, output_reserve_tokens=1000)
    eng = CompressorEngine(config=config, context_window=32_000)
    msgs = conversation(12)[:-2]  # mid-turn: the newest result is unread
    pruned = eng.prune_tool_results_only(msgs, eng.threshold_tokens)
    assert pruned is not None and not transcript_problems(pruned)
    assert pruned[-2:] == msgs[-2:]  # the newest call and its result are whole
    assert sum((m.content or "").startswith(PRUNED_MARK) for m in pruned) >= 6


def test_proactive_prune_is_rare_and_batched():
    msgs = conversation(30)
    eng = engine(
        None,
        prune=PruneConfig(
            enabled=True, above_tokens=10_000, min_reclaim_tokens=1_000, rearm_growth_tokens=5_000
        ),
    )
    assert eng.prune_tool_results_only(msgs, 5_000) is None  # below the line
    pruned = eng.prune_tool_results_only(msgs, 30_000)
    assert pruned is not None and not transcript_problems(pruned)
    rearm = eng.state.prune_rearm_at
    assert eng.prune_tool_results_only(msgs, rearm - 1) is None  # not again until it grows
    greedy = engine(
        None, prune=PruneConfig(enabled=True, above_tokens=10, min_reclaim_tokens=10**9)
    )
    assert greedy.prune_tool_results_only(msgs, 30_000) is None  # not worth breaking the cache


def test_proactive_prune_rearms_after_a_compression():
    """The re-arm line is measured on the history before a compression; after one the
    history is small again and grows back, and pruning must work on it again."""
    eng = engine(
        lambda m: sections_text(),
        prune=PruneConfig(
            enabled=True, above_tokens=10_000, min_reclaim_tokens=1_000, rearm_growth_tokens=5_000
        ),
    )
    assert eng.prune_tool_results_only(conversation(30), 40_000) is not None
    assert eng.state.prune_rearm_at > 20_000
    compressed = eng.compress(conversation(30))
    grown = [
        m if m.row_id is not None else m.with_row(1000 + i)
        for i, m in enumerate(compressed + conversation(12)[1:])
    ]
    assert eng.prune_tool_results_only(grown, 15_000) is not None


@pytest.mark.parametrize("rounds", [1, 2])
def test_proactive_prune_never_cuts_results_the_model_has_not_read(rounds):
    """A short history has no tail boundary; its newest results are still unread by the
    model, so pruning them would replace what the model asked for with a one-liner."""
    eng = engine(
        None,
        prune=PruneConfig(
            enabled=True, above_tokens=100, min_reclaim_tokens=100, rearm_growth_tokens=100
        ),
    )
    msgs = conversation(rounds, output_chars=11_000)[:-2]  # the turn is still running
    pruned = eng.prune_tool_results_only(msgs, 30_000)
    kept = pruned if pruned is not None else msgs
    newest = [m for m in kept if m.role == "tool"][-1]
    assert newest.content == msgs[-1].content and not newest.content.startswith(PRUNED_MARK)


def test_fallback_and_merge_sections():
    msgs = conversation(8)
    msgs[4] = msgs[4].evolve(content="[TOOL_ERROR] make failed")
    sections = fallback_sections(msgs)
    assert "Follow-up 5: don't touch the CI config." in sections["Constraints and preferences"]
    assert "failed" in sections["Progress: blocked"]
    assert sections["Current task"] == "Now write the release notes."
    merged = merge_sections({**sections, "Goal": "older goal"}, fallback_sections(conversation(2)))
    assert merged["Goal"] == "older goal"
    assert set(merged) == set(SECTIONS)


def test_engine_registry_and_optional_arguments():
    made = create_engine("compressor", config=ContextConfig(), context_window=1000, unrelated=1)
    assert isinstance(made, CompressorEngine)
    with pytest.raises(ValueError, match="unknown context engine 'nope'"):
        create_engine("nope")

    class Minimal(ContextEngine):
        name = "minimal"

        def update_from_response(self, usage):
            pass

        def should_compress(self, prompt_tokens=None):
            return False

        def compress(self, messages, *, focus=None, force=False):
            return messages

    minimal = Minimal()  # the optional hooks are the base class's no-ops
    minimal.on_session_start("s", state={"x": 1})
    minimal.set_overhead(100)
    assert minimal.export_state() is None
    assert minimal.prune_tool_results_only(conversation(2), prompt_tokens=10**6) is None
    assert minimal.status() == {"name": "minimal"}


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_tiny_histories_have_nothing_to_compress(count):
    msgs = stored(
        [
            {"role": "user" if i % 2 == 0 else "assistant", "content": "z" * 50_000}
            for i in range(count)
        ]
    )
    assert choose_boundaries(msgs, tail_budget_tokens=10, estimate=estimate_message_tokens) is None
    assert engine(lambda m: sections_text()).compress(msgs) is msgs


def test_forced_compression_shrinks_the_tail_when_everything_fits():
    msgs = conversation(4, output_chars=200)[:-1]  # one request and four tool rounds
    eng = engine(lambda m: sections_text())
    assert (
        choose_boundaries(
            msgs, tail_budget_tokens=eng.tail_budget, estimate=estimate_message_tokens
        )
        is None
    )
    forced = eng.compress(msgs, force=True)
    assert len(forced) < len(msgs) and not transcript_problems(forced)
    assert forced[-1] is msgs[-1]


def test_compression_lands_well_under_the_threshold():
    """The tail shrinks until the rebuilt history is predicted to fit with headroom, so
    the next compression is not one request away."""
    msgs = conversation(40, output_chars=6000)
    eng = engine(lambda m: sections_text(), window=32_000)
    out = eng.compress(msgs)
    assert eng.estimate(out) < eng.threshold_tokens * 0.6
    assert not transcript_problems(out)


def test_compressing_mid_turn_twice_keeps_roles_alternating_and_the_task():
    msgs = [{"role": "user", "content": "Migrate every service."}]
    for r in range(40):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call(f"m{r}")]})
        msgs.append({"role": "tool", "tool_call_id": f"m{r}", "content": "y" * 2000})
    msgs = from_api_messages(msgs)
    eng = engine(lambda m: sections_text())
    once = eng.compress(msgs, force=True)
    assert [m.role for m in once[:4]] == ["user", "assistant", "user", "assistant"]
    assert not transcript_problems(once)
    for r in range(40, 80):
        once.append(
            Message.from_api({"role": "assistant", "content": None, "tool_calls": [call(f"m{r}")]})
        )
        once.append(Message("tool", "y" * 2000, tool_call_id=f"m{r}"))
    twice = eng.compress(once, force=True)
    assert not transcript_problems(twice)
    summary = next(m.content for m in twice if m.content and SUMMARY_MARK in m.content)
    assert "## Current task\nMigrate every service." in summary


def test_no_summary_is_paid_for_when_replacing_the_old_one_cannot_save_enough():
    """A middle that is mostly the previous summary (pruned tool output leaves little
    else) shrinks by what is not summary: the new summary takes the old one's place. The
    summary call is skipped when that cannot reach context.min_saving, instead of being
    paid for and then discarded."""
    previous = sections_text(**{"Critical context": "detail " * 500})
    msgs = [{"role": "user", "content": "Check every number."}]
    msgs.append({"role": "assistant", "content": summary_message_text(parse_sections(previous))})
    msgs.append({"role": "user", "content": "Part 2: check the next ones."})
    for r in range(4):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call(f"p{r}")]})
        msgs.append({"role": "tool", "tool_call_id": f"p{r}", "content": f"{PRUNED_MARK} ok]"})
    msgs.append({"role": "assistant", "content": None, "tool_calls": [call("new")]})
    msgs.append({"role": "tool", "tool_call_id": "new", "content": "7\n" * 5_500})
    calls: list[list[dict]] = []
    eng = engine(lambda m: calls.append(m) or previous)
    history = stored(msgs)
    assert eng.compress(history) is history
    assert calls == [] and eng.state.retry_above > 0


def test_a_near_miss_is_retried_as_soon_as_it_would_pay():
    """A compression skipped for saving a little under context.min_saving waits only for
    the growth that makes it pay, not for the prompt to grow by a fifth."""

    def history(groups: int) -> list[Message]:
        msgs = [{"role": "user", "content": "Check every number."}]
        for r in range(groups):
            msgs.append({"role": "assistant", "content": None, "tool_calls": [call(f"p{r}")]})
            msgs.append({"role": "tool", "tool_call_id": f"p{r}", "content": "z" * 600})
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call("new")]})
        msgs.append({"role": "tool", "tool_call_id": "new", "content": "7\n" * 5500})
        return stored(msgs)

    eng = engine(lambda m: sections_text())
    near = history(4)
    before = eng.estimate(near)
    assert eng.compress(near) is near  # ~18% of the prompt: under the minimum
    assert before < eng.state.retry_above < int(before * 1.1)
    assert eng.estimate(history(5)) >= eng.state.retry_above  # one more group: try again
