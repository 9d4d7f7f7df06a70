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
CAPABILITY_MODULES: tuple[str, ...] = ()

# Capability modules not yet moved to ``TOOLS``: they still register on the process
# registry when imported, so only this composition root imports them (herald.tools
# itself imports nothing from skills or memory).
LEGACY_CAPABILITY_MODULES: tuple[str, ...] = (
    "herald.skills.tools",
    "herald.memory.session_search",
    "herald.memory.tool",
)

_lock = threading.Lock()
_assembled = False


def default_registry() -> ToolRegistry:
    """The process registry with the built-ins and every capability's tools on it."""
    global _assembled
    from herald.tools import registry

    with _lock:
        if not _assembled:
            for name in LEGACY_CAPABILITY_MODULES:
                importlib.import_module(name)
            for name in CAPABILITY_MODULES:
                registry.add(*importlib.import_module(name).TOOLS)
            _assembled = True
    return registry


__all__ = ["CAPABILITY_MODULES", "LEGACY_CAPABILITY_MODULES", "default_registry"]
