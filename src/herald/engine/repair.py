"""Make a stored transcript legal to send again (DESIGN invariant 3).

After a crash or an interrupt a transcript can hold an assistant tool call
with no result, or a result whose call is gone. `repair_transcript` returns
the messages to send, with a synthetic result right after every unanswered
call and orphaned results dropped; it is deterministic, so the same stored
rows always give the same bytes. Synthetic results that belong at the very
end are also returned separately so the caller can persist them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

INTERRUPTED_RESULT = "[interrupted before completion]"
CANCELLED_RESULT = "[cancelled: the user interrupted the turn before this tool ran]"


def tool_result_message(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


@dataclass
class RepairReport:
    messages: list[dict[str, Any]]
    tail_results: list[dict[str, Any]] = field(default_factory=list)  # to persist
    inserted: int = 0
    dropped_orphans: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.inserted or self.dropped_orphans)


def repair_transcript(messages: list[dict[str, Any]]) -> RepairReport:
    out: list[dict[str, Any]] = []
    pending: dict[str, str] = {}  # call id -> tool name, in call order
    report = RepairReport(messages=out)

    def close_pending() -> list[dict[str, Any]]:
        synthetic = [tool_result_message(cid, name, INTERRUPTED_RESULT) for cid, name in pending.items()]
        pending.clear()
        out.extend(synthetic)
        report.inserted += len(synthetic)
        return synthetic

    for msg in messages:
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id in pending:
                pending.pop(call_id)
                out.append(msg)
            else:
                report.dropped_orphans += 1  # its call is gone, or it is a duplicate
            continue
        if pending:
            close_pending()
        out.append(msg)
        if role == "assistant":
            for call in msg.get("tool_calls") or []:
                name = (call.get("function") or {}).get("name", "")
                pending[call.get("id", "")] = name
    if pending:
        report.tail_results = close_pending()
    return report
