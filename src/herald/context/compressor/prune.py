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

from herald.context.engine_base import ROW_ID

ERROR_PREFIX = "[TOOL_ERROR]"
KEY_ARGUMENTS = ("path", "command", "query", "url", "pattern", "name", "id", "action")
PRUNED_MARK = "[pruned tool result:"


@dataclass(frozen=True)
class PruneOutcome:
    messages: list[dict[str, Any]]
    chars_before: int
    chars_after: int

    @property
    def reclaimed_chars(self) -> int:
        return self.chars_before - self.chars_after


def parsed_tool_calls(
    messages: list[dict[str, Any]],
) -> Iterator[tuple[dict[str, Any], str, dict[str, Any]]]:
    """Every tool call in `messages` as (call, tool name, arguments dict); arguments that
    are not a JSON object come back as {}."""
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except (TypeError, json.JSONDecodeError):
                args = {}
            yield call, fn.get("name", "?"), args if isinstance(args, dict) else {}


def _calls_by_id(messages: list[dict[str, Any]]) -> dict[str, tuple[str, dict[str, Any]]]:
    return {call.get("id", ""): (name, args) for call, name, args in parsed_tool_calls(messages)}


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


def _content_len(msg: dict[str, Any]) -> int:
    total = len(msg.get("content") or "")
    for call in msg.get("tool_calls") or []:
        total += len((call.get("function") or {}).get("arguments") or "")
    return total


def _changed(original: dict[str, Any], **updates: Any) -> dict[str, Any]:
    """A new row (no ROW_ID) with the updates applied."""
    row = {k: v for k, v in original.items() if k != ROW_ID}
    row.update(updates)
    return row


def prune_tool_results(
    messages: list[dict[str, Any]],
    *,
    protect_from: int,
    keep_chars: int = 200,
    argument_max_chars: int = 2000,
) -> PruneOutcome:
    """Prune `messages[:protect_from]` (the tail from `protect_from` on is untouched)."""
    calls = _calls_by_id(messages)
    out: list[dict[str, Any]] = []
    latest_output: dict[str, int] = {}  # content -> index of its newest copy
    for i, msg in enumerate(messages):
        if msg.get("role") == "tool":
            latest_output[msg.get("content") or ""] = i
    for i, msg in enumerate(messages):
        if i >= protect_from:
            out.append(msg)
            continue
        role = msg.get("role")
        content = msg.get("content") or ""
        if role == "tool" and not content.startswith(PRUNED_MARK):
            tool, args = calls.get(msg.get("tool_call_id", ""), ("?", {}))
            if latest_output.get(content, i) > i and len(content) > keep_chars:
                label = f"{tool}({key_argument(args)})"
                new = (
                    f"{PRUNED_MARK} {label} → same output as a later call, {len(content):,} chars]"
                )
            else:
                new = one_line_summary(tool, args, content, keep_chars)
            out.append(_changed(msg, content=new) if len(new) < len(content) else msg)
            continue
        if role == "assistant" and msg.get("tool_calls"):
            trimmed, changed = [], False
            for call in msg["tool_calls"]:
                fn = call.get("function") or {}
                raw = fn.get("arguments") or ""
                if len(raw) > argument_max_chars:
                    cut = json.dumps({"_truncated_arguments": raw[:argument_max_chars] + "…"})
                    call = {**call, "function": {**fn, "arguments": cut}}
                    changed = True
                trimmed.append(call)
            out.append(_changed(msg, tool_calls=trimmed) if changed else msg)
            continue
        out.append(msg)
    return PruneOutcome(
        messages=out,
        chars_before=sum(_content_len(m) for m in messages),
        chars_after=sum(_content_len(m) for m in out),
    )
