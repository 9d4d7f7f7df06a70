"""Run the tool calls of one assistant message and record their results.

Results are appended in call order, each persisted as soon as it exists.
An interrupt is checked before and after every tool; calls that never ran
still get a result ("cancelled"), so every call has exactly one (invariant 3).
Queued steer rides on the last result of the round.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from herald.engine.repair import CANCELLED_RESULT, tool_result_message
from herald.engine.steer import attach_steer
from herald.providers import ToolCall
from herald.tools import ToolResult, sanitize_error

if TYPE_CHECKING:
    from herald.engine.agent import Agent

log = logging.getLogger(__name__)


def _run_one(agent: Agent, call: ToolCall) -> ToolResult:
    if call.name not in agent.enabled_tools:
        available = ", ".join(agent.enabled_tools) or "none"
        return ToolResult(
            sanitize_error(f"tool {call.name!r} is not available here; available: {available}"),
            True,
        )
    cb = agent.callbacks
    if cb.on_tool_start is not None:
        cb.on_tool_start(call.name, call.arguments)
    result = agent.registry.dispatch(call.name, call.arguments, agent.tool_context)
    if cb.on_tool_end is not None:
        cb.on_tool_end(call.name, result.content, result.is_error)
    return result


def run_tool_round(agent: Agent, calls: list[ToolCall]) -> bool:
    """Run `calls`; returns True when the user interrupted the round."""
    interrupted = False
    for index, call in enumerate(calls):
        if agent.cancel_event.is_set():
            interrupted = True
        if interrupted:
            content = CANCELLED_RESULT
        else:
            content = _run_one(agent, call).content
            if agent.cancel_event.is_set():
                interrupted = True
        message: dict[str, Any] = tool_result_message(call.id, call.name, content)
        api_content = None
        if index == len(calls) - 1 and not interrupted:
            steer = agent.steer_queue.drain()
            if steer:
                api_content = attach_steer(content, steer)
        agent.transcript.append(message, api_content=api_content)
    return interrupted
