"""Make a stored transcript legal to send again (DESIGN invariant 3).

After a crash or an interrupt a transcript can hold an assistant tool call
with no result, or a result whose call is gone. `repair_transcript` returns
the messages to send, with a synthetic result right after every unanswered
call and orphaned results dropped; it is deterministic, so the same stored
rows always give the same bytes. Synthetic results that belong at the very
end are also returned separately so the caller can persist them.

Two shapes some servers produce are repaired too: one assistant message
carrying a call id twice (the later duplicates are dropped: providers reject
it), and parallel calls split over two assistant messages with their results
after both (each real result replaces the placeholder its call was given, so
nothing real is lost).
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
    deduped_calls: int = 0  # calls dropped because their id was already used
    replaced_placeholders: int = 0  # early placeholders replaced by the real result

    @property
    def changed(self) -> bool:
        return bool(
            self.inserted or self.dropped_orphans or self.deduped_calls or self.replaced_placeholders
        )


def _dedupe_calls(msg: dict[str, Any], seen: set[str]) -> tuple[dict[str, Any], int]:
    """`msg` without tool calls whose id was already used (a copy when changed)."""
    calls = msg.get("tool_calls") or []
    kept = []
    for call in calls:
        call_id = call.get("id", "")
        if call_id in seen:
            continue
        seen.add(call_id)
        kept.append(call)
    if len(kept) == len(calls):
        return msg, 0
    return {**msg, "tool_calls": kept}, len(calls) - len(kept)


def repair_transcript(messages: list[dict[str, Any]]) -> RepairReport:
    out: list[dict[str, Any]] = []
    pending: dict[str, str] = {}  # call id -> tool name, in call order
    placeholders: dict[str, int] = {}  # call id -> index in out of its synthetic result
    seen_ids: set[str] = set()
    report = RepairReport(messages=out)

    def close_pending() -> list[dict[str, Any]]:
        synthetic = [tool_result_message(cid, name, INTERRUPTED_RESULT) for cid, name in pending.items()]
        for offset, message in enumerate(synthetic):
            placeholders[message["tool_call_id"]] = len(out) + offset
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
            elif call_id in placeholders:
                # Its call was closed early (the next assistant message came first):
                # the real result takes the placeholder's place.
                out[placeholders.pop(call_id)] = msg
                report.inserted -= 1
                report.replaced_placeholders += 1
            else:
                report.dropped_orphans += 1  # its call is gone, or it is a duplicate
            continue
        if role != "assistant" or not pending or not msg.get("tool_calls"):
            placeholders.clear()  # past a user turn, a late result is an orphan
        if pending:
            close_pending()
        if role == "assistant" and msg.get("tool_calls"):
            msg, dropped = _dedupe_calls(msg, seen_ids)
            report.deduped_calls += dropped
        out.append(msg)
        if role == "assistant":
            for call in msg.get("tool_calls") or []:
                name = (call.get("function") or {}).get("name", "")
                pending[call.get("id", "")] = name
    if pending:
        report.tail_results = close_pending()
    return report
