"""Token estimates for text the provider has not yet counted.

Provider-reported usage is the anchor (DESIGN invariant 6); these estimates
only fill the gap since the last report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from herald.providers.message import Message

CHARS_PER_TOKEN = 3.6  # calibrated on English prose and code; errs towards more tokens
MESSAGE_OVERHEAD_TOKENS = 4


def estimate_text_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1 if text else 0


def estimate_message_tokens(message: Message | dict[str, Any]) -> int:
    """What one message costs in a request (its sent content and tool calls)."""
    if isinstance(message, Message):
        content: Any = message.sent_content or ""
        calls = [(c.name, c.arguments) for c in message.tool_calls]
    else:
        content = message.get("api_content") or message.get("content") or ""
        calls = [
            (
                (c.get("function") or {}).get("name", ""),
                (c.get("function") or {}).get("arguments", ""),
            )
            for c in message.get("tool_calls") or []
        ]
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    total = MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(content)
    for name, arguments in calls:
        total += estimate_text_tokens(name or "") + estimate_text_tokens(arguments or "")
    return total


def estimate_messages_tokens(messages: Sequence[Message | dict[str, Any]]) -> int:
    return sum(estimate_message_tokens(m) for m in messages)
