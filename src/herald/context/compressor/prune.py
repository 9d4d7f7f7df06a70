"""Phase 1: shrink old tool traffic without a model call.

Outside the protected tail: identical tool outputs are de-duplicated (the
newest copy stays), tool results become one-line summaries (tool, key
argument, outcome, size) and over-long tool-call arguments are cut. Every
call keeps exactly one result; only contents change, so a changed row is
written as a new row and the old one archived.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from herald.providers.base import ToolCall
from herald.providers.message import Message

ERROR_PREFIX = "[TOOL_ERROR]"
KEY_ARGUMENTS = ("path", "command", "query", "url", "pattern", "name", "id", "action")
PRUNED_MARK = "[pruned tool result:"


@dataclass(frozen=True)
class PruneOutcome:
    messages: list[Message]
    chars_before: int
    chars_after: int

    @property
    def reclaimed_chars(self) -> int:
        return self.chars_before - self.chars_after


def parsed_tool_calls(
    messages: list[Message],
) -> Iterator[tuple[ToolCall, dict[str, Any]]]:
    """Every tool call in `messages` with its arguments as a dict; arguments that are
    not a JSON object come back as {}."""
    for msg in messages:
        for call in msg.tool_calls:
            try:
                args = json.loads(call.arguments or "{}")
            except (TypeError, json.JSONDecodeError):
                args = {}
            yield call, args if isinstance(args, dict) else {}


def _calls_by_id(messages: list[Message]) -> dict[str, tuple[str, dict[str, Any]]]:
    return {call.id: (call.name or "?", args) for call, args in parsed_tool_calls(messages)}


def key_argument(args: dict[str, Any]) -> str:
    for key in KEY_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value if len(value) <= 80 else value[:77] + "…"
    for value in args.values():
        if isinstance(value, str | int | float) and str(value):
            text = str(value)
            return text if len(text) <= 80 else text[:77] + "…"
    return ""


def one_line_summary(tool: str, args: dict[str, Any], content: str, keep_chars: int) -> str:
    outcome = "error" if content.startswith(ERROR_PREFIX) else "ok"
    first = " ".join(content.split())[:keep_chars]
    if len(content) > keep_chars:
        first += "…"
    key = key_argument(args)
    label = f"{tool}({key})" if key else tool
    return f"{PRUNED_MARK} {label} → {outcome}, {len(content):,} chars] {first}".rstrip()


def _text(msg: Message) -> str:
    content = msg.sent_content
    return content if isinstance(content, str) else ""


def _clean_text(msg: Message) -> str:
    """The stored text: an untrusted result is sent fenced, but its stub is made from
    the words themselves, then fenced again (`_stub`)."""
    content = msg.content
    return content if isinstance(content, str) else ""


def _stub(msg: Message, text: str) -> Message:
    """`msg` with `text` in place of its content, a new row (evolve drops the row id);
    an untrusted one keeps its label and is sent inside the fence."""
    from herald.safety.provenance import fence, source_of  # loaded once pruning happens

    source = source_of(msg.provenance)
    return msg.evolve(content=text, api_content=fence(text, source) if source else None)


def _content_len(msg: Message) -> int:
    return len(_text(msg)) + sum(len(call.arguments or "") for call in msg.tool_calls)


def prune_tool_results(
    messages: list[Message],
    *,
    protect_from: int,
    keep_chars: int = 200,
    argument_max_chars: int = 2000,
) -> PruneOutcome:
    """Prune `messages[:protect_from]` (the tail from `protect_from` on is untouched)."""
    calls = _calls_by_id(messages)
    out: list[Message] = []
    latest_output: dict[str, int] = {}  # content -> index of its newest copy
    for i, msg in enumerate(messages):
        if msg.role == "tool":
            latest_output[_clean_text(msg)] = i
    for i, msg in enumerate(messages):
        if i >= protect_from:
            out.append(msg)
            continue
        content = _clean_text(msg)
        if msg.role == "tool" and not content.startswith(PRUNED_MARK):
            tool, args = calls.get(msg.tool_call_id or "", ("?", {}))
            if latest_output.get(content, i) > i and len(content) > keep_chars:
                label = f"{tool}({key_argument(args)})"
                new = (
                    f"{PRUNED_MARK} {label} → same output as a later call, {len(content):,} chars]"
                )
            else:
                new = one_line_summary(tool, args, content, keep_chars)
            out.append(_stub(msg, new) if len(new) < len(content) else msg)
            continue
        if msg.role == "assistant" and msg.tool_calls:
            trimmed, changed = [], False
            for call in msg.tool_calls:
                raw = call.arguments or ""
                if len(raw) > argument_max_chars:
                    cut = json.dumps({"_truncated_arguments": raw[:argument_max_chars] + "…"})
                    call = ToolCall(call.id, call.name, cut)
                    changed = True
                trimmed.append(call)
            out.append(msg.evolve(tool_calls=tuple(trimmed)) if changed else msg)
            continue
        out.append(msg)
    return PruneOutcome(
        messages=out,
        chars_before=sum(_content_len(m) for m in messages),
        chars_after=sum(_content_len(m) for m in out),
    )
