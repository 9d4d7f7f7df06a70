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
from typing import Annotated

from pydantic import BeforeValidator

from herald.config.schema_memory import MemoryConfig
from herald.memory.builtin import Action, BuiltinMemory
from herald.memory.entries import Target
from herald.memory.manager import MemoryManager
from herald.tools.consequence import actions
from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec


@dataclass
class StandaloneMemory:
    """The BuiltinMemory of an agent with no memory manager attached."""

    memory: BuiltinMemory | None = None


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
    standalone.memory = BuiltinMemory(ctx.home, config, identity=ctx.identity)
    return standalone.memory


def _folded(value: object) -> object:
    """Case and surrounding spaces do not matter in action and target (a value that is
    not a string is left for the type check to report)."""
    return value.strip().lower() if isinstance(value, str) else value


@tool(
    toolset="core",
    max_result_chars=12_000,
    controls=("content",),
    consequential=True,
    consequence=actions("add", "replace"),
    attributed=("content",),
)
def memory(
    ctx: ToolContext,
    action: Annotated[Action, BeforeValidator(_folded)],
    target: Annotated[Target, BeforeValidator(_folded)],
    content: str | None = None,
    old_text: str | None = None,
) -> str:
    """Save durable memory that will be in your system prompt in future sessions.
    target 'memory': your own notes (environment facts, conventions, lessons learned);
    target 'user': who the user is (name, preferences, habits). Keep entries short and
    factual; do not store task progress or anything you can look up again. add needs
    content; replace needs old_text (a short piece unique to one entry) and content;
    remove needs old_text. Each file has a size limit: when full, consolidate entries with
    replace/remove. Returns the live entries and usage.

    Args:
        content: the entry text (add, replace)
        old_text: a short piece of the entry to change (replace, remove)
    """
    # Which arguments an action needs is checked by BuiltinMemory.apply: a request
    # missing one is a refused write listing the entries, like every other refusal.
    result = memory_for(ctx).apply(action, target, content, old_text)
    return json.dumps(result.to_dict(), ensure_ascii=False)


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (memory,)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
