"""Token estimates for text the provider has not yet counted.

Provider-reported usage is the anchor (DESIGN invariant 6); these estimates
only fill the gap since the last report.
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 3.6  # calibrated on English prose and code; errs towards more tokens
MESSAGE_OVERHEAD_TOKENS = 4


def estimate_text_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1 if text else 0


def estimate_message_tokens(message: dict[str, Any]) -> int:
    content = message.get("api_content") or message.get("content") or ""
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    total = MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(content)
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        total += estimate_text_tokens(fn.get("name", "")) + estimate_text_tokens(
            fn.get("arguments", "")
        )
    return total


def estimate_messages_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(estimate_message_tokens(m) for m in messages)
