"""The `clarify` tool: ask the user a question through the surface and wait for the answer.

The surface supplies `ctx.clarify`; where no human is present (cron, API,
webhooks) it is None and the tool says so, telling the model to go on with its
best judgement and state the assumption instead of waiting for nobody.
"""

from __future__ import annotations

import json
from typing import Any

from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec

MAX_QUESTION_CHARS = 2000
MAX_CHOICES = 8
MAX_CHOICE_CHARS = 200

SCHEMA: dict[str, Any] = {
    "description": (
        "Ask the user a question and wait for the answer. Use only when you cannot "
        "proceed sensibly without it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "choices": {
                "type": "array",
                "items": {"type": "string"},
                "description": "options to offer; the user may still answer freely",
            },
        },
        "required": ["question"],
    },
}


def _choices(raw: Any) -> list[str] | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise ToolArgumentError("choices must be an array of strings")
    choices = [c.strip() for c in raw if c.strip()]
    if len(choices) > MAX_CHOICES:
        raise ToolArgumentError(f"offer at most {MAX_CHOICES} choices, got {len(choices)}")
    too_long = [c for c in choices if len(c) > MAX_CHOICE_CHARS]
    if too_long:
        raise ToolArgumentError(f"each choice must be at most {MAX_CHOICE_CHARS} characters")
    return choices or None


def handle_clarify(args: dict[str, Any], ctx: ToolContext) -> str:
    question = args.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ToolArgumentError("question must be a non-empty string")
    question = question.strip()
    if len(question) > MAX_QUESTION_CHARS:
        raise ToolArgumentError(f"question is too long (max {MAX_QUESTION_CHARS} characters)")
    choices = _choices(args.get("choices"))
    if ctx.clarify is None:
        raise ToolArgumentError(
            f"no user is present to answer questions here (surface: {ctx.surface}). "
            "Proceed with your best judgement and state the assumption you made."
        )
    answer = ctx.clarify(question, choices)
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
TOOLS: tuple[ToolSpec, ...] = (
    tool(name="clarify", toolset="core", schema=SCHEMA, max_result_chars=10_000)(
        lambda ctx, **args: handle_clarify(args, ctx)
    ),
)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = ["TOOLS", "handle_clarify", "register"]
