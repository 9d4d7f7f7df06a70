"""The composition root for tools: which capabilities a surface's agents may use.

Capability packages export their tools as values (a tuple ``TOOLS`` of
`ToolSpec`, usually built with `herald.tools.tool`); nothing registers by being
imported, and there is no process-wide registry. A surface asks for a registry
(`builtin_tools`, or `agent_tools` with the configured MCP servers' tools over
it), owns it, and hands it to `Agent.open(..., tools=...)`; the engine never
imports this module or any capability.

Each capability is named here with the tools it gives, so a registry knows every
tool's name and toolset without importing anything: a capability's module is
imported the first time one of its tools is looked up (a turn offers it, or a
call runs it). A one-shot that offers no kanban tool never imports kanban.

A new capability is one line in ``CAPABILITIES``:
``Capability("herald.pkg.tools", "toolset", ("tool_a", "tool_b"))``.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.tools.offers import catalog_entry
from herald.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.tools import ToolSpec


@dataclass(frozen=True)
class Capability:
    """A module exporting ``TOOLS``, and the names and toolset of those tools."""

    module: str
    toolset: str
    tools: tuple[str, ...]


CAPABILITIES: tuple[Capability, ...] = (
    Capability("herald.tools.todo", "core", ("todo",)),
    Capability("herald.tools.clarify", "core", ("clarify",)),
    Capability("herald.tools.file_tools", "file", ("read_file", "write_file", "patch")),
    Capability("herald.tools.search_files", "file", ("search_files",)),
    Capability("herald.tools.terminal", "terminal", ("terminal",)),
    Capability("herald.tools.process", "terminal", ("process",)),
    Capability("herald.tools.web", "web", ("web_search", "web_extract")),
    Capability("herald.tools.execute_code", "execute_code", ("execute_code",)),
    Capability(
        "herald.tools.browser",
        "browser",
        (
            "browser_navigate",
            "browser_snapshot",
            "browser_click",
            "browser_type",
            "browser_select",
            "browser_scroll",
            "browser_back",
            "browser_screenshot",
            "browser_wait_for",
            "browser_close",
        ),
    ),
    Capability("herald.tools.vision", "vision", ("vision_analyze",)),
    Capability("herald.skills.tools", "core", ("skills_list", "skill_view", "skill_manage")),
    Capability("herald.memory.session_search", "core", ("session_search",)),
    Capability("herald.memory.tool", "core", ("memory",)),
    Capability(
        "herald.kanban.tools",
        "kanban",
        (
            "kanban_show",
            "kanban_list",
            "kanban_create",
            "kanban_link",
            "kanban_comment",
            "kanban_heartbeat",
            "kanban_block",
            "kanban_unblock",
            "kanban_request_review",
            "kanban_complete",
            "kanban_attach",
        ),
    ),
    Capability("herald.cron.tool", "cronjob", ("cronjob",)),
    Capability("herald.delegation.tool", "delegation", ("delegate_task",)),
)

# What only the gateway's chat sessions are offered: a chat to send files to. The CLI and
# every other surface build their registries without these, so the tools do not exist
# there at all (and a gateway session outside a chat, the API's, has no chat port).
GATEWAY_CAPABILITIES: tuple[Capability, ...] = (
    Capability("herald.tools.send_file", "chat", ("send_file",)),
)

# The module names, for tools that list what the root composes (`herald doctor`, tests).
CAPABILITY_MODULES: tuple[str, ...] = tuple(
    c.module for c in (*CAPABILITIES, *GATEWAY_CAPABILITIES)
)


# The built-in tools' offers (definition, requires_env, check; herald.tools.offers),
# compiled from their modules by `compile_offers` and shipped beside this file, so that
# offering a tool imports nothing: its module loads when the tool is first called.
# tests/tools/test_tool_offers.py fails when it differs from the modules; regenerate it
# with `python -m herald.toolbox --write-offers`.
OFFERS_FILE = Path(__file__).with_name("tool_offers.json")


def _load(module: str) -> tuple[ToolSpec, ...]:
    return tuple(importlib.import_module(module).TOOLS)


@functools.cache
def shipped_offers() -> dict[str, Any]:
    """The catalog shipped with Herald (empty when the file is missing: every tool is
    then offered by importing its module, as before there was a catalog)."""
    try:
        return json.loads(OFFERS_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def builtin_tools(capabilities: Iterable[Capability] = CAPABILITIES) -> ToolRegistry:
    """A new registry with `capabilities` declared on it (none of them imported yet)."""
    registry = ToolRegistry()
    offers = shipped_offers()
    for capability in capabilities:
        registry.declare(
            capability.tools,
            capability.toolset,
            functools.partial(_load, capability.module),
            {name: offers[name] for name in capability.tools if name in offers},
        )
    return registry


def compile_offers(
    capabilities: Iterable[Capability] = (*CAPABILITIES, *GATEWAY_CAPABILITIES),
) -> dict[str, Any]:
    """The catalog of `capabilities` (their modules are imported): tool name → entry."""
    out: dict[str, Any] = {}
    for capability in capabilities:
        for spec in _load(capability.module):
            out[spec.name] = catalog_entry(spec)
    return dict(sorted(out.items()))


def write_offers(path: Path = OFFERS_FILE) -> None:
    text = json.dumps(compile_offers(), indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


def gateway_tools() -> ToolRegistry:
    """The gateway's registry: every built-in capability and the chat ones."""
    return builtin_tools((*CAPABILITIES, *GATEWAY_CAPABILITIES))


def agent_tools(settings: Settings, *, base: ToolRegistry | None = None) -> ToolRegistry:
    """The tools of one agent of `settings`: `base` (default: a new `builtin_tools()`),
    with the enabled MCP servers' tools over it when there are any (MCP is imported only
    then). The agent closes it (an MCP overlay stops servers no other agent uses)."""
    base = base if base is not None else builtin_tools()
    if not any(server.enabled for server in settings.config.mcp.servers.values()):
        return base
    from herald.mcp import agent_registry

    return agent_registry(settings, base=base)


def default_registry() -> ToolRegistry:
    """A new registry of every built-in capability (what `builtin_tools()` gives)."""
    return builtin_tools()


__all__ = [
    "CAPABILITIES",
    "CAPABILITY_MODULES",
    "GATEWAY_CAPABILITIES",
    "Capability",
    "agent_tools",
    "builtin_tools",
    "compile_offers",
    "default_registry",
    "gateway_tools",
    "shipped_offers",
    "write_offers",
]

if __name__ == "__main__":  # python -m herald.toolbox --write-offers
    if sys.argv[1:] != ["--write-offers"]:
        sys.exit("usage: python -m herald.toolbox --write-offers")
    write_offers()
    print(f"wrote {OFFERS_FILE}")
