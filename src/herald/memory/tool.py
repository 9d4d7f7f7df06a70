"""The `memory` tool: add, replace or remove entries of MEMORY.md (target memory,
the agent's own notes) and USER.md (target user, who the user is).

The result is JSON with the live entries and usage (`MEMORY.md 812/2,200
chars`). A refused write (limit, no or several matches, unsafe text, a
conflicting edit on disk, the failure cap) is an ordinary result with
`"success": false`, an `error` saying what to do and the entries listed: the
model needs the full list to consolidate, which a capped error string would cut.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from herald.config.schema_memory import MemoryConfig
from herald.memory.builtin import ACTIONS, BuiltinMemory
from herald.memory.entries import TARGETS
from herald.memory.manager import MemoryManager
from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec


@dataclass
class StandaloneMemory:
    """The BuiltinMemory of an agent with no memory manager attached."""

    memory: BuiltinMemory | None = None


SCHEMA: dict[str, Any] = {
    "description": (
        "Save durable memory that will be in your system prompt in future sessions. "
        "target 'memory': your own notes (environment facts, conventions, lessons learned); "
        "target 'user': who the user is (name, preferences, habits). Keep entries short "
        "and factual; do not store task progress or anything you can look up again. "
        "add needs content; replace needs old_text (a short piece unique to one entry) and "
        "content; remove needs old_text. Each file has a size limit: when full, consolidate "
        "entries with replace/remove. Returns the live entries and usage."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "target": {"type": "string", "enum": list(TARGETS)},
            "content": {"type": "string", "description": "the entry text (add, replace)"},
            "old_text": {
                "type": "string",
                "description": "a short piece of the entry to change (replace, remove)",
            },
        },
        "required": ["action", "target"],
    },
}


def memory_for(ctx: ToolContext) -> BuiltinMemory:
    """The BuiltinMemory this agent writes through: the attached manager's (which
    shares the snapshot's clobber guard and mirrors writes to the provider), else a
    standalone one kept in this agent's tool state."""
    manager = ctx.memory
    if isinstance(manager, MemoryManager):
        return manager.builtin
    standalone = ctx.own(StandaloneMemory)
    if standalone.memory is not None:
        return standalone.memory
    if ctx.home is None:
        raise ToolArgumentError("memory is unavailable: this agent has no Herald home")
    config = ctx.config.memory if ctx.config is not None else MemoryConfig()
    standalone.memory = BuiltinMemory(ctx.home, config)
    return standalone.memory


def _text(args: dict[str, Any], name: str) -> str | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolArgumentError(f"{name} must be a string")
    return value


def handle_memory(args: dict[str, Any], ctx: ToolContext) -> str:
    action = str(args.get("action") or "").strip().lower()
    target = str(args.get("target") or "").strip().lower()
    result = memory_for(ctx).apply(action, target, _text(args, "content"), _text(args, "old_text"))
    return json.dumps(result.to_dict(), ensure_ascii=False)


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (
    tool(name="memory", toolset="core", schema=SCHEMA, max_result_chars=12_000)(
        lambda ctx, **args: handle_memory(args, ctx)
    ),
)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
