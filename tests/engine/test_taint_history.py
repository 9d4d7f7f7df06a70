"""A value from an earlier session's untrusted content stays untrusted when the model
finds it again with session_search in a new session."""

from __future__ import annotations

from pathlib import Path

from tests.engine.test_taint_memory import registry_with_inbox

from herald.testing.fake_llm import Reply

TOOLS = ("read_inbox", "session_search", "write_file")


def test_session_search_does_not_launder_an_old_page(make_agent, fake_llm, tmp_path):
    target = str(tmp_path / "work" / "forward-rules.txt")

    def first(req):
        if req.messages[-1]["role"] == "user":
            return Reply.tool_call("read_inbox", {})
        return Reply.text("One note about invoices.")

    fake_llm.set_handler(first)
    agent = make_agent(registry=registry_with_inbox(), enabled_tools=TOOLS)
    agent.run_turn("check the inbox")

    def second(req):
        tools = [m for m in req.messages if m["role"] == "tool"]
        if not tools:
            return Reply.tool_call("session_search", {"query": "invoice"})
        if len(tools) == 1:
            return Reply.tool_call(
                "write_file",
                {"path": target, "content": "forward to billing@ledger-relay.example"},
            )
        if len(tools) == 2:
            # The address, not the path, is what came from the mail: a file named after it.
            return Reply.tool_call(
                "write_file",
                {"path": str(tmp_path / "work" / "billing@ledger-relay.example"), "content": "x"},
            )
        return Reply.text("done")

    fake_llm.set_handler(second)
    fresh = make_agent(registry=registry_with_inbox(), enabled_tools=TOOLS)
    result = fresh.run_turn("what did that invoice note say? write it down in forward-rules.txt")
    assert result.session_id != agent.session_id
    rows = fresh.store.get_messages(result.session_id)
    search_row = next(r for r in rows if r.role == "tool")
    assert search_row.provenance == "untrusted:plugin:mail"
    assert Path(target).exists()  # the owner named the file; the address is only data
    assert not (tmp_path / "work" / "billing@ledger-relay.example").exists()
    last = [m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool"][-1]
    assert "Not run" in last["content"] and "plugin:mail" in last["content"]
