"""`Message`: the typed chat message and its conversions to the API and store shapes."""

from __future__ import annotations

import dataclasses

import pytest

from herald.providers.base import ToolCall
from herald.providers.message import Message, from_api_messages, to_api_messages
from herald.state import StateStore

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "read_file", "arguments": '{"path": "a"}'},
}


def test_message_is_frozen():
    message = Message(role="user", content="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]


def test_api_content_is_what_the_model_sees_and_the_row_id_never_is():
    message = Message(role="user", content="clean", api_content="fenced", row_id=7)
    assert message.to_api() == {"role": "user", "content": "fenced"}
    assert Message(role="user", content="clean").to_api() == {"role": "user", "content": "clean"}


def test_tool_calls_and_tool_call_id_round_trip_through_the_api_shape():
    assistant = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    result = {"role": "tool", "content": "ok", "tool_call_id": "c1"}
    parsed = from_api_messages([assistant, result])
    assert parsed[0].tool_calls == (ToolCall(id="c1", name="read_file", arguments='{"path": "a"}'),)
    assert parsed[1].tool_call_id == "c1"
    assert to_api_messages(parsed) == [assistant, result]


def test_tool_call_id_is_sent_only_on_tool_results_and_name_never():
    message = Message(role="assistant", content="x", tool_call_id="stray", name="n")
    assert message.to_api() == {"role": "assistant", "content": "x"}


def test_a_dict_without_a_role_is_refused_with_what_it_had():
    with pytest.raises(ValueError, match="needs a role"):
        Message.from_api({"content": "hi"})


def test_evolve_makes_a_new_row_unless_told_otherwise():
    stored = Message(role="tool", content="long", tool_call_id="c1", row_id=3)
    assert stored.evolve(content="short").row_id is None
    assert stored.evolve(content="short").tool_call_id == "c1"
    assert stored.with_row(9).row_id == 9


def test_plain_dicts_pass_through_request_assembly_unchanged():
    system = {"role": "system", "content": "be brief"}
    assert to_api_messages([system, Message(role="user", content="hi")]) == [
        system,
        {"role": "user", "content": "hi"},
    ]


def test_a_stored_row_maps_to_a_message_with_its_row_id_and_the_same_api_bytes(tmp_path):
    store = StateStore(tmp_path / "state.db")
    try:
        sid = store.create_session(source="cli")
        sent = [
            Message(role="user", content="clean", api_content="fenced"),
            Message(role="assistant", content=None, tool_calls=(ToolCall.from_message_dict(CALL),)),
            Message(role="tool", content="ok", tool_call_id="c1", name="read_file"),
        ]
        rows = store.append_messages(sid, [m.to_store() for m in sent])
        loaded = store.get_messages(sid)
        for row, original in zip(loaded, sent, strict=True):
            message = row.to_message()
            assert message.row_id == row.id
            assert message.to_api() == row.to_api() == original.to_api()
        assert [r.id for r in rows] == [r.id for r in loaded]
        assert loaded[2].to_message().name == "read_file"
    finally:
        store.close()
