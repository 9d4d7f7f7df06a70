"""repair_transcript: the pure function that makes a stored transcript legal again."""

from __future__ import annotations

import itertools

from herald.engine import INTERRUPTED_RESULT, RepairReport, repair_transcript
from herald.providers.message import from_api_messages, to_api_messages
from herald.testing.transcript_checks import transcript_problems


def repair(msgs: list[dict]) -> RepairReport:
    """Repair chat dicts (the stored rows' API view), as messages."""
    return repair_transcript(from_api_messages(msgs))


def api(messages) -> list[dict]:
    return to_api_messages(messages)


def call(cid: str, name: str = "todo") -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}


def result(cid: str, text: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


USER = {"role": "user", "content": "hi"}


def test_legal_transcript_is_untouched():
    msgs = [USER, {"role": "assistant", "content": None, "tool_calls": [call("a")]}, result("a")]
    report = repair(msgs)
    assert api(report.messages) == msgs
    assert not report.changed and not report.tail_results


def test_trailing_unanswered_call_gets_a_persistable_result():
    msgs = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
        result("a"),
    ]
    report = repair(msgs)
    assert [m.to_store() for m in report.tail_results] == [
        {"role": "tool", "tool_call_id": "b", "name": "todo", "content": INTERRUPTED_RESULT}
    ]
    assert api(report.messages)[-1]["tool_call_id"] == "b"
    assert not transcript_problems(api(report.messages))


def test_gap_in_the_middle_is_filled_in_place_not_at_the_tail():
    msgs = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        {"role": "user", "content": "are you there?"},
        {"role": "assistant", "content": "yes"},
    ]
    report = repair(msgs)
    assert [m["role"] for m in api(report.messages)] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert [m.to_store() for m in report.tail_results] == []
    assert report.inserted == 1
    assert not transcript_problems(api(report.messages))


def test_orphan_and_duplicate_results_are_dropped():
    msgs = [
        USER,
        result("ghost"),
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        result("a"),
        result("a", "again"),
        {"role": "assistant", "content": "done"},
    ]
    report = repair(msgs)
    assert report.dropped_orphans == 2
    assert [m.get("tool_call_id") for m in api(report.messages) if m["role"] == "tool"] == ["a"]
    assert not transcript_problems(api(report.messages))


def test_repair_is_deterministic():
    msgs = [USER, {"role": "assistant", "content": None, "tool_calls": [call("a")]}, USER]
    assert repair(msgs).messages == repair(msgs).messages


def test_two_calls_with_one_id_in_one_message_are_deduped():
    msgs = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("a")]},
        result("a", "the real result"),
    ]
    report = repair(msgs)
    assistant = api(report.messages)[1]
    assert [c["id"] for c in assistant["tool_calls"]] == ["a"]
    assert api(report.messages)[2]["content"] == "the real result"
    assert not transcript_problems(api(report.messages))
    assert report.changed
    assert [c["id"] for c in msgs[1]["tool_calls"]] == ["a", "a"]  # the input is not mutated


def test_parallel_calls_split_over_two_assistant_messages_keep_their_real_results():
    msgs = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        {"role": "assistant", "content": None, "tool_calls": [call("b")]},
        result("a", "result of a"),
        result("b", "result of b"),
    ]
    report = repair(msgs)
    contents = {
        m["tool_call_id"]: m["content"] for m in api(report.messages) if m["role"] == "tool"
    }
    assert contents == {"a": "result of a", "b": "result of b"}  # nothing synthetic
    assert INTERRUPTED_RESULT not in [m.get("content") for m in api(report.messages)]
    assert not transcript_problems(api(report.messages))
    assert report.dropped_orphans == 0


def test_roles_never_repeat_after_repair_of_split_calls():
    msgs = [
        USER,
        {"role": "assistant", "content": "first", "tool_calls": [call("a")]},
        {"role": "assistant", "content": None, "tool_calls": [call("b")]},
        result("b"),
    ]
    report = repair(msgs)
    roles = [m["role"] for m in api(report.messages)]
    assert all(not (x == y == "assistant") for x, y in itertools.pairwise(roles))
    assert not transcript_problems(api(report.messages))
