"""Plugin tools on one agent's overlay, offered after the built-ins.

Like MCP tools, plugin tools are appended after the bundle's tools, sorted, so
enabling a plugin never moves the built-ins' prefix of the tools array (the
prompt cache stays warm). A plugin tool whose name a built-in (or an earlier
plugin's tool) already has is offered as ``<plugin>__<tool>`` instead — the
model APIs allow only ``[A-Za-z0-9_-]`` in a tool name — and the rename is
reported once.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from herald.tools import ToolOverlay, ToolRegistry, ToolSpec

MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def namespaced(plugin: str, tool: str) -> str:
    return _UNSAFE.sub("_", f"{plugin}__{tool}")[:MAX_TOOL_NAME]


class PluginToolOverlay(ToolOverlay):
    """The base registry (built-ins, maybe MCP) plus the enabled plugins' tools."""

    def __init__(self, base: ToolRegistry, specs: list[ToolSpec]) -> None:
        super().__init__(base)
        for spec in specs:
            self._tools[spec.name] = spec
        self._plugin_names = tuple(sorted(s.name for s in specs))

    @classmethod
    def build(
        cls,
        base: ToolRegistry,
        offered: Sequence[tuple[str, ToolSpec]],
        note: Callable[[str], None],
    ) -> ToolRegistry:
        """`base` with `offered` ((plugin name, tool) pairs, in registration order)
        over it; each rename or refusal is told to `note` (the plugin set's)."""
        node: ToolRegistry | None = base
        while node is not None:  # a forked agent's registry has the plugin tools already
            if isinstance(node, PluginToolOverlay):
                return base
            node = getattr(node, "base", None)
        taken = set(base.names())
        specs: list[ToolSpec] = []
        for owner, spec in offered:
            name = spec.name
            if name in taken or _UNSAFE.search(name):
                new = namespaced(owner, name)
                why = "a built-in or another plugin's tool has that name"
                if _UNSAFE.search(name) and name not in taken:
                    why = "tool names may hold only letters, digits, _ and -"
                note(f"plugin {owner!r}: tool {name!r} is offered as {new!r} ({why})")
                spec = dataclasses.replace(spec, name=new, schema={**spec.schema, "name": new})
                name = new
            if name in taken:
                note(f"plugin tool {name!r} refused: the name is taken twice over")
                continue
            taken.add(name)
            specs.append(spec)
        return cls(base, specs)

    def appended_tool_names(self) -> tuple[str, ...]:
        return tuple(sorted({*self.base.appended_tool_names(), *self._plugin_names}))


__all__ = ["PluginToolOverlay", "namespaced"]
