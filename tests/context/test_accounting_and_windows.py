"""Token accounting anchored on reported usage; context-window resolution."""

from __future__ import annotations

from herald.context import TokenAccountant, lookup_window, resolve_context_window
from herald.context.tokens import estimate_messages_tokens


def msgs(n: int) -> list[dict]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "word " * 50} for i in range(n)
    ]


def test_reported_usage_is_the_anchor_and_only_the_gap_is_estimated():
    acc = TokenAccountant()
    history = msgs(4)
    acc.record(prompt_tokens=10_000, completion_tokens=500, message_count=4)
    assert acc.current("sys", history) == 10_500
    grown = history + msgs(2)
    assert acc.current("sys", grown) == 10_500 + estimate_messages_tokens(grown[4:])


def test_without_an_anchor_everything_is_estimated():
    acc = TokenAccountant()
    history = msgs(3)
    assert acc.current("", history) == estimate_messages_tokens(history)
    acc.record(prompt_tokens=0, completion_tokens=9, message_count=3)  # nothing reported
    assert acc.anchor is None


def test_reset_and_anchor_ahead_of_history():
    acc = TokenAccountant()
    acc.record(prompt_tokens=5000, completion_tokens=10, message_count=10)
    short = msgs(3)  # history got shorter (compression): the anchor no longer applies
    assert acc.current("", short) == estimate_messages_tokens(short)
    acc.reset()
    assert acc.anchor is None


def test_anchor_survives_a_restart_through_session_meta():
    acc = TokenAccountant()
    acc.record(prompt_tokens=7, completion_tokens=3, message_count=2)
    again = TokenAccountant()
    again.load_meta(acc.to_meta())
    assert again.anchor == acc.anchor
    again.load_meta({"junk": 1})
    assert again.anchor is None


def test_window_resolution_order_and_one_notice():
    notes: list[str] = []
    assert resolve_context_window("gpt-4o-mini", override=9000) == 9000
    assert resolve_context_window("smollm2", reported=8192) == 8192
    assert lookup_window("claude-sonnet-4-5") == 200_000
    assert lookup_window("gpt-4.1-mini") == 1_047_576
    assert resolve_context_window("mystery-model-x", default=16_000, notify=notes.append) == 16_000
    assert resolve_context_window("mystery-model-x", default=16_000, notify=notes.append) == 16_000
    assert len(notes) == 1 and "model.context_length" in notes[0]
