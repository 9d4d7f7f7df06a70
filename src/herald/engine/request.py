"""Request assembly: the frozen system prompt plus the history, as the active model sees it."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from herald.context import rewrite_identity
from herald.engine.images import META_IMAGES, META_TOOL_IMAGES, expand_images
from herald.providers.message import Message, to_api_messages
from herald.tools import RequestSnapshot

if TYPE_CHECKING:
    from herald.engine.turn_context import TurnContext


def request_messages(ctx: TurnContext) -> list[dict[str, Any]]:
    """What the next request sends: the session's prompt and the history."""
    prompt = ctx.session.system_prompt
    assert prompt is not None
    history = ctx.transcript.messages
    messages = assemble_messages(
        prompt,
        history,
        session_identity=ctx.session.identity,
        active_identity=ctx.client.identity(),
    )
    if ctx.session.meta.get(META_IMAGES) or ctx.session.meta.get(META_TOOL_IMAGES):
        messages = expand_images(ctx, messages, history)
    return messages


def request_snapshot(ctx: TurnContext) -> RequestSnapshot:
    """What a tool of this turn may see of the turn's request (`ToolContext.parent_request`):
    the messages the next request would send (so the assistant message whose tool calls
    are running is included) and the tools array, copied."""
    messages = copy.deepcopy(request_messages(ctx))
    return RequestSnapshot(
        system_prompt=messages[0]["content"],
        messages=tuple(messages[1:]),
        tools=tuple(copy.deepcopy(list(ctx.tools.definitions))),
    )


def assemble_messages(
    system_prompt: str,
    history: list[Message] | list[dict[str, Any]],
    *,
    session_identity: tuple[str, str],
    active_identity: tuple[str, str],
) -> list[dict[str, Any]]:
    """The stored prompt is sent byte-for-byte; only when a fallback model answers
    are the identity lines of this request's copy rewritten (never the stored prompt)."""
    prompt = system_prompt
    if active_identity != session_identity:
        provider, model = active_identity
        prompt = rewrite_identity(system_prompt, provider=provider, model=model)
    body = to_api_messages(history)
    return [{"role": "system", "content": prompt}, *body]


BUDGET_SUMMARY_REQUEST = (
    "[Herald: this turn has used its whole iteration budget, so no more tools can run. "
    "Reply now, without tools: summarise what you did, what is still unfinished, and "
    "what the user should do or ask next.]"
)
