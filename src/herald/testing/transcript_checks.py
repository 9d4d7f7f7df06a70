"""Checks that a message list is legal to send to a provider (DESIGN invariant 3)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from herald.providers.message import Message, to_api_messages


def transcript_problems(messages: Sequence[Message | dict[str, Any]]) -> list[str]:
    """Every way `messages` breaks the rules: each assistant tool call answered by
    exactly one tool result right after it, no orphan results, no two assistant
    messages in a row (strict chat templates reject that), no call id used twice,
    and a conversation that starts (after the system prompt) with a user message."""
    messages = to_api_messages(messages)
    problems: list[str] = []
    body = [m for m in messages if m.get("role") != "system"]
    if any(m.get("role") == "system" for m in messages[1:]):
        problems.append("a system message appears after the first position")
    if body and body[0].get("role") != "user":
        problems.append(f"the conversation starts with {body[0].get('role')!r}, not 'user'")
    for index, (before, after) in enumerate(itertools.pairwise(body)):
        if before.get("role") == after.get("role") == "assistant":
            problems.append(f"two assistant messages in a row at {index}")
    ids = [c.get("id") for m in body for c in m.get("tool_calls") or []]
    if len(ids) != len(set(ids)):
        problems.append(f"a tool call id is used twice: {sorted(ids)}")
    i = 0
    while i < len(body):
        msg = body[i]
        role = msg.get("role")
        if role == "tool":
            problems.append(f"orphan tool result {msg.get('tool_call_id')!r} at {i}")
            i += 1
            continue
        if role == "assistant" and msg.get("tool_calls"):
            wanted = [c.get("id") for c in msg["tool_calls"]]
            j = i + 1
            got: list[str] = []
            while j < len(body) and body[j].get("role") == "tool":
                got.append(body[j].get("tool_call_id"))
                j += 1
            if sorted(got) != sorted(wanted):
                problems.append(f"tool calls {wanted} at {i} answered by {got}")
            i = j
            continue
        i += 1
    return problems
