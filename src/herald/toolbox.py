"""The composition root for tools: every capability's declared tools, assembled once.

Capability packages export their tools as values (a tuple ``TOOLS`` of
`ToolSpec`, usually built with `herald.tools.tool`); nothing registers by being
imported. `default_registry()` adds the modules listed in
``CAPABILITY_MODULES`` to the process registry the first time it is asked for.
A new capability adds one line there.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.tools import ToolRegistry

# Modules that export ``TOOLS``; imported lazily, in this order.
CAPABILITY_MODULES: tuple[str, ...] = (
    "herald.tools.todo",
    "herald.tools.clarify",
    "herald.tools.file_tools",
    "herald.tools.search_files",
    "herald.tools.terminal",
    "herald.tools.process",
    "herald.tools.web",
    "herald.tools.execute_code",
    "herald.tools.browser",
    "herald.tools.vision",
    "herald.skills.tools",
    "herald.memory.session_search",
    "herald.memory.tool",
    "herald.kanban.tools",
    "herald.cron.tool",
    "herald.delegation.tool",
)

_lock = threading.Lock()
_assembled = False


def default_registry() -> ToolRegistry:
    """The process registry with the built-ins and every capability's tools on it."""
    global _assembled
    from herald.tools import registry

    with _lock:
        if not _assembled:
            for name in CAPABILITY_MODULES:
                registry.add(*importlib.import_module(name).TOOLS)
            _assembled = True
    return registry


__all__ = ["CAPABILITY_MODULES", "default_registry"]
