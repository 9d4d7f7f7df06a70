"""Response intake: turn the model's answer into the assistant message, on disk first."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from herald.providers import NormalizedResponse

if TYPE_CHECKING:
    from herald.engine.transcript import Transcript


def normalize_tool_call_ids(response: NormalizedResponse) -> None:
    """Every call needs a unique id for its result to point at; some servers send
    none or repeat them."""
    seen: set[str] = set()
    for call in response.tool_calls:
        if not call.id or call.id in seen:
            call.id = f"call_{uuid.uuid4().hex[:24]}"
        seen.add(call.id)


def assistant_message(response: NormalizedResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.text or ""}
    if response.tool_calls:
        message["content"] = response.text or None
        message["tool_calls"] = [call.to_message_dict() for call in response.tool_calls]
    if response.reasoning:
        message["reasoning"] = response.reasoning
    return message


def take_response(transcript: Transcript, response: NormalizedResponse) -> dict[str, Any]:
    """Persist the assistant message *before* any tool it asks for runs (invariant 5)."""
    normalize_tool_call_ids(response)
    return transcript.append(assistant_message(response))
