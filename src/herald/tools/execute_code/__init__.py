"""`execute_code` (toolset ``execute_code``): a short Python script, run in the session's
environment, that calls Herald's tools through a generated ``herald_tools`` module, so
many tool calls cost one model round trip.

The script passes the command check as inline Python before it starts; each call it
makes runs through the turn's own dispatch path (`ToolContext.nested_tools`), under the
same approval, write gate and hooks as a direct call. The channel is the process's own
stdin/stdout (see `channel`); limits: time, printed output, tool calls per run.
"""

from __future__ import annotations

from herald.tools.execute_code.tool import NEVER_FROM_SCRIPT, TOOLSET, execute_code, script_tools
from herald.tools.registry import ToolRegistry, ToolSpec

TOOLS: tuple[ToolSpec, ...] = (execute_code,)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = ["NEVER_FROM_SCRIPT", "TOOLS", "TOOLSET", "execute_code", "register", "script_tools"]
