"""The `clarify` tool: ask the user a question through the surface and wait for the answer.

The surface supplies `ctx.clarify`; where no human is present (cron, API,
webhooks) it is None and the tool says so, telling the model to go on with its
best judgement and state the assumption instead of waiting for nobody.
"""

from __future__ import annotations

import json

from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec

MAX_QUESTION_CHARS = 2000
MAX_CHOICES = 8
MAX_CHOICE_CHARS = 200


def _choices(raw: list[str] | None) -> list[str] | None:
    if raw is None:
        return None
    choices = [c.strip() for c in raw if c.strip()]
    if len(choices) > MAX_CHOICES:
        raise ToolArgumentError(f"offer at most {MAX_CHOICES} choices, got {len(choices)}")
    too_long = [c for c in choices if len(c) > MAX_CHOICE_CHARS]
    if too_long:
        raise ToolArgumentError(f"each choice must be at most {MAX_CHOICE_CHARS} characters")
    return choices or None


@tool(toolset="core", max_result_chars=10_000)
def clarify(ctx: ToolContext, question: str, choices: list[str] | None = None) -> str:
    """Ask the user a question and wait for the answer. Use only when you cannot
    proceed sensibly without it.

    Args:
        choices: options to offer; the user may still answer freely
    """
    question = question.strip()
    if not question:
        raise ToolArgumentError("question must be a non-empty string")
    if len(question) > MAX_QUESTION_CHARS:
        raise ToolArgumentError(f"question is too long (max {MAX_QUESTION_CHARS} characters)")
    offered = _choices(choices)
    if ctx.clarify is None:
        raise ToolArgumentError(
            f"no user is present to answer questions here (surface: {ctx.surface}). "
            "Proceed with your best judgement and state the assumption you made."
        )
    answer = ctx.clarify(question, offered)
    if answer is None:
        return json.dumps(
            {
                "answered": False,
                "note": "The user did not answer in time. Proceed with your best judgement "
                "and state the assumption you made.",
            }
        )
    return json.dumps({"answered": True, "answer": str(answer)}, ensure_ascii=False)


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (clarify,)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = ["TOOLS", "clarify", "register"]
