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

from herald.providers.message import Message

INTERRUPTED_RESULT = "[interrupted before completion]"
CANCELLED_RESULT = "[cancelled: the user interrupted the turn before this tool ran]"


def tool_result_message(call_id: str, name: str, content: str) -> Message:
    return Message("tool", content, tool_call_id=call_id, name=name)


@dataclass
class RepairReport:
    messages: list[Message]  # an edited stored message keeps its row id (never stored)
    tail_results: list[Message] = field(default_factory=list)  # new rows, to persist
    inserted: int = 0
    dropped_orphans: int = 0
    deduped_calls: int = 0  # calls dropped because their id was already used
    replaced_placeholders: int = 0  # early placeholders replaced by the real result

    @property
    def changed(self) -> bool:
        return bool(
            self.inserted
            or self.dropped_orphans
            or self.deduped_calls
            or self.replaced_placeholders
        )


def _dedupe_calls(msg: Message, seen: set[str]) -> tuple[Message, int]:
    """`msg` without tool calls whose id was already used (a copy when changed; the
    copy keeps the row id: the fix is made on every load, never stored)."""
    kept = []
    for call in msg.tool_calls:
        if call.id in seen:
            continue
        seen.add(call.id)
        kept.append(call)
    if len(kept) == len(msg.tool_calls):
        return msg, 0
    return msg.evolve(tool_calls=tuple(kept), row_id=msg.row_id), len(msg.tool_calls) - len(kept)


def repair_transcript(messages: list[Message]) -> RepairReport:
    out: list[Message] = []
    pending: dict[str, str] = {}  # call id -> tool name, in call order
    placeholders: dict[str, int] = {}  # call id -> index in out of its synthetic result
    seen_ids: set[str] = set()
    report = RepairReport(messages=out)

    def close_pending() -> list[Message]:
        synthetic = [
            tool_result_message(cid, name, INTERRUPTED_RESULT) for cid, name in pending.items()
        ]
        for offset, message in enumerate(synthetic):
            placeholders[message.tool_call_id or ""] = len(out) + offset
        pending.clear()
        out.extend(synthetic)
        report.inserted += len(synthetic)
        return synthetic

    for msg in messages:
        role = msg.role
        if role == "tool":
            call_id = msg.tool_call_id or ""
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
        if role != "assistant" or not pending or not msg.tool_calls:
            placeholders.clear()  # past a user turn, a late result is an orphan
        if pending:
            close_pending()
        if role == "assistant" and msg.tool_calls:
            msg, dropped = _dedupe_calls(msg, seen_ids)
            report.deduped_calls += dropped
        out.append(msg)
        if role == "assistant":
            for call in msg.tool_calls:
                pending[call.id] = call.name
    if pending:
        report.tail_results = close_pending()
    return report
