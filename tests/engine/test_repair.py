"""repair_transcript: the pure function that makes a stored transcript legal again."""

from __future__ import annotations

from herald.engine import INTERRUPTED_RESULT, repair_transcript
from herald.testing.transcript_checks import transcript_problems


def call(cid: str, name: str = "todo") -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}


def result(cid: str, text: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


USER = {"role": "user", "content": "hi"}


def test_legal_transcript_is_untouched():
    msgs = [USER, {"role": "assistant", "content": None, "tool_calls": [call("a")]}, result("a")]
    report = repair_transcript(msgs)
    assert report.messages == msgs
    assert not report.changed and not report.tail_results


def test_trailing_unanswered_call_gets_a_persistable_result():
    msgs = [USER, {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]}, result("a")]
    report = repair_transcript(msgs)
    assert report.tail_results == [
        {"role": "tool", "tool_call_id": "b", "name": "todo", "content": INTERRUPTED_RESULT}
    ]
    assert report.messages[-1]["tool_call_id"] == "b"
    assert not transcript_problems(report.messages)


def test_gap_in_the_middle_is_filled_in_place_not_at_the_tail():
    msgs = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        {"role": "user", "content": "are you there?"},
        {"role": "assistant", "content": "yes"},
    ]
    report = repair_transcript(msgs)
    assert [m["role"] for m in report.messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert report.tail_results == []
    assert report.inserted == 1
    assert not transcript_problems(report.messages)


def test_orphan_and_duplicate_results_are_dropped():
    msgs = [
        USER,
        result("ghost"),
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        result("a"),
        result("a", "again"),
        {"role": "assistant", "content": "done"},
    ]
    report = repair_transcript(msgs)
    assert report.dropped_orphans == 2
    assert [m.get("tool_call_id") for m in report.messages if m["role"] == "tool"] == ["a"]
    assert not transcript_problems(report.messages)


def test_repair_is_deterministic():
    msgs = [USER, {"role": "assistant", "content": None, "tool_calls": [call("a")]}, USER]
    assert repair_transcript(msgs).messages == repair_transcript(msgs).messages
