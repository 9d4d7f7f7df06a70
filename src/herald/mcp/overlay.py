"""MCP tools on one agent: a registry overlay, never the process-wide registry.

`McpToolOverlay` wraps the agent's base registry: lookups fall through to it,
and the overlay adds each configured server's tools as ``mcp_<server>_<tool>``
in toolset ``mcp-<server>``. `select_tools` asks a registry for
`appended_tool_names()` and puts those names after the bundle's tools, sorted,
so MCP tools never move the built-ins' prefix of the tools array (the prompt
cache stays warm when a server comes or goes).

When a server was tried and is unusable, a read-only ``mcp_status`` tool is
appended as well: its description names the servers that are missing and why,
so the model knows; calling it gives the full status.

Schemas are passed through whole for now. The deferred-schema mechanism (tools
listed by name and one line until the model asks) plugs in at
`definition_schema()`, the one place an MCP tool's advertised schema is built.
"""

from __future__ import annotations

import json
import re
import threading
from typing import TYPE_CHECKING, Any

from herald.mcp.connection import RemoteTool
from herald.tools import ToolContext, ToolOverlay, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.mcp.manager import McpManager

STATUS_TOOL = "mcp_status"
MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """``mcp_<server>_<tool>`` with characters the model APIs reject replaced by '_'."""
    return _UNSAFE.sub("_", f"mcp_{server}_{tool}")[:MAX_TOOL_NAME]


def toolset_name(server: str) -> str:
    return f"mcp-{server}"


def definition_schema(server: str, remote: RemoteTool) -> dict[str, Any]:
    """What the model is told about one MCP tool (full schema until deferral lands)."""
    parameters = dict(remote.input_schema) if remote.input_schema else {}
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    description = remote.description or f"the {remote.name} tool"
    return {"description": f"[MCP {server}] {description}", "parameters": parameters}


class McpToolOverlay(ToolOverlay):
    """The base registry plus this agent's MCP tools (and any per-agent tools
    registered on it later), on the registry's own per-agent overlay."""

    def __init__(self, base: ToolRegistry, manager: McpManager) -> None:
        super().__init__(base)
        self.manager = manager
        self._closed = False
        self._mcp_names: tuple[str, ...] = ()
        self._signature: Any = None

    # ---- the MCP layer ------------------------------------------------------------------

    def refresh(self) -> tuple[str, ...]:
        """Bring the overlay's MCP tools in line with the servers (starting lazy ones that
        have no cached tool list); returns the MCP tool names, sorted."""
        specs: list[ToolSpec] = []
        self.manager.begin_needed_starts()
        for server in self.manager.connections:
            for remote in self.manager.tools(server):
                specs.append(self._spec(server, remote))
        failures = self.manager.failures()
        if failures:
            specs.append(self._status_spec(failures))
        signature = tuple(
            (s.name, s.schema["description"], str(s.schema["parameters"])) for s in specs
        )
        if signature != self._signature:
            with self._lock:
                for name in self._mcp_names:
                    self._tools.pop(name, None)
                for spec in specs:
                    self._tools[spec.name] = spec
                self._mcp_names = tuple(sorted(s.name for s in specs))
                self._signature = signature
                self._generation += 1
        return self._mcp_names

    def appended_tool_names(self) -> tuple[str, ...]:
        return self.refresh()

    def _spec(self, server: str, remote: RemoteTool) -> ToolSpec:
        name = tool_name(server, remote.name)
        manager = self.manager

        def handler(args: dict[str, Any], ctx: ToolContext) -> Any:
            return manager.call(server, remote, name, args, ctx)

        handler.__name__ = f"{name}_handler"
        return ToolSpec(
            name=name,
            toolset=toolset_name(server),
            schema={"name": name, **definition_schema(server, remote)},
            handler=handler,
            parallel_safe=remote.read_only,
            # A server's results are outside content unless the owner vouched for it
            # (mcp.servers.<name>.trusted): they cannot steer consequential calls.
            untrusted=None if self._trusted(server) else f"mcp:{server}",
        )

    def _trusted(self, server: str) -> bool:
        config = self.manager.configs.get(server)
        return bool(config is not None and config.trusted)

    def _status_spec(self, failures: dict[str, str]) -> ToolSpec:
        missing = "; ".join(f"{name}: {why}" for name, why in sorted(failures.items()))
        manager = self.manager

        def handler(args: dict[str, Any], ctx: ToolContext) -> Any:
            return [
                {"server": s.name, "state": s.state, "error": s.error, "tools": list(s.tools)}
                for s in manager.status()
            ]

        return ToolSpec(
            name=STATUS_TOOL,
            toolset="mcp",
            schema={
                "name": STATUS_TOOL,
                "description": "Status of the MCP tool servers. Unavailable now, so their "
                f"tools are missing: {missing}"[:1000],
                "parameters": {"type": "object", "properties": {}},
            },
            handler=handler,
            parallel_safe=True,
        )

    # ---- dispatch: the overlay first, then the base --------------------------------------

    def dispatch(
        self,
        name: str,
        raw_arguments: str | dict[str, Any] | None,
        ctx: ToolContext,
        *,
        run_hooks: bool = True,
    ) -> Any:
        if name not in self._tools and name.startswith("mcp_") and self.base.get(name) is None:
            self.refresh()  # a server that started (or came back) since the tools were listed
        if name in self._tools:
            return super().dispatch(name, raw_arguments, ctx, run_hooks=run_hooks)
        if name.startswith("mcp_") and self.base.get(name) is None:
            from herald.tools import ToolResult, sanitize_error

            return ToolResult(sanitize_error(self._missing(name)), True)
        return self.base.dispatch(name, raw_arguments, ctx, run_hooks=run_hooks)

    def _missing(self, name: str) -> str:
        for server in self.manager.connections:
            if name.startswith(tool_name(server, "")):
                return self.manager.unavailable_message(server)
        return f"unknown tool {name!r}: no configured MCP server provides it"

    def close(self) -> None:
        """This agent is done with the servers; they stop when no agent uses them."""
        if not self._closed:
            self._closed = True
            _release(self.manager)


def mcp_failures(registry: ToolRegistry) -> dict[str, str]:
    """The MCP servers of `registry` that were tried and are unusable, with why."""
    if isinstance(registry, McpToolOverlay):
        return registry.manager.failures()
    return {}


# Managers shared by the agents of one process with the same home and servers: a new
# session (`/new`, another API conversation) reuses running servers instead of starting
# more. Each agent still has its own overlay; the last one to close stops the servers.
_shared: dict[tuple[Any, ...], list[Any]] = {}  # key -> [manager, users]
_shared_lock = threading.Lock()


def _release(manager: McpManager) -> None:
    with _shared_lock:
        for key, entry in list(_shared.items()):
            if entry[0] is manager:
                entry[1] -= 1
                if entry[1] > 0:
                    return
                del _shared[key]
                break
    manager.close()


def agent_registry(settings: Settings, *, base: ToolRegistry | None = None) -> ToolRegistry:
    """The registry an agent of these settings should use: the base (the process
    registry by default) when no MCP server is enabled, else an overlay with them."""
    if base is None:
        from herald.toolbox import default_registry

        base = default_registry()
    servers = {n: c for n, c in settings.config.mcp.servers.items() if c.enabled}
    if not servers:
        return base
    from herald.mcp.manager import McpManager

    key = (
        str(settings.home.root),
        json.dumps({n: c.model_dump() for n, c in servers.items()}, sort_keys=True, default=str),
        str(getattr(settings.secrets, "env_file", None)),
    )
    with _shared_lock:
        entry = _shared.get(key)
        if entry is None or entry[0].closed:
            entry = _shared[key] = [
                McpManager(servers, secrets=settings.secrets, home=settings.home),
                0,
            ]
        entry[1] += 1
        manager = entry[0]
    return McpToolOverlay(base, manager)
