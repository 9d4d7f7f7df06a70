"""Fork mode: children that continue the parent's exact request, so the provider's prompt
cache serves all of them.

A fork child's session is seeded (`herald.engine.SessionSeed`) with the parent's
system prompt bytes and its history up to and including the assistant message that
called `delegate_task`; every tool call of that message gets the same placeholder
result. The child's tool list is the parent's, name for name. Only the directive —
the child's own user message — differs, so N children send byte-identical
prefixes.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from herald.engine.options import SessionSeed

if TYPE_CHECKING:
    from herald.tools import RequestSnapshot

FORK_PLACEHOLDER = (
    "[Herald: this call is answered by the forked sub-agents; its result is not shown here]"
)


def fork_seed(snapshot: RequestSnapshot) -> SessionSeed:
    """The seed every fork child of one call shares."""
    messages = [copy.deepcopy(m) for m in snapshot.messages]
    last = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")),
        default=None,
    )
    if last is None:
        raise ValueError("the parent request has no assistant tool call to fork from")
    prefix = messages[: last + 1]
    placeholders = [
        {"role": "tool", "tool_call_id": call["id"], "content": FORK_PLACEHOLDER}
        for call in prefix[-1]["tool_calls"]
    ]
    return SessionSeed(snapshot.system_prompt, tuple(prefix + placeholders))


__all__ = ["FORK_PLACEHOLDER", "fork_seed"]
