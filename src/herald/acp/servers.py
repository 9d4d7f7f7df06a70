"""The MCP servers an editor hands a session (ACP `session/new` and `session/load`).

Each becomes a Herald `McpServerConfig` for that session only: stdio servers are
started in the session's directory with the editor's environment variables, HTTP
servers get the editor's headers. Herald speaks streamable HTTP, not the older SSE
transport, and says so in its capabilities; an SSE server an editor sends anyway
is skipped with a warning in the log. A name Herald cannot use as a server name
(spaces, length) is made into one, and a name already taken by `mcp.servers` in
the config gets a suffix, so the configured server keeps its tools.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from herald.config.schema_mcp import SERVER_NAME_RE, McpServerConfig

log = logging.getLogger(__name__)

_INVALID = re.compile(r"[^A-Za-z0-9_-]+")


def server_name(wanted: str, taken: set[str]) -> str:
    """`wanted` as a valid, unused Herald server name."""
    base = _INVALID.sub("-", wanted.strip()).strip("-_")[:24] or "editor"
    if not SERVER_NAME_RE.match(base):
        base = f"e{base}"[:24]
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def editor_servers(
    requested: list[Any] | None, *, cwd: str, taken: set[str]
) -> dict[str, McpServerConfig]:
    """Herald configs for the editor's servers (acp.schema McpServerStdio /
    HttpMcpServer objects), by the names their tools will carry."""
    out: dict[str, McpServerConfig] = {}
    for server in requested or ():
        kind = getattr(server, "type", None) or ("stdio" if hasattr(server, "command") else "")
        label = getattr(server, "name", "") or "editor"
        if kind not in ("stdio", "http"):
            log.warning(
                "the editor's MCP server %r uses the %s transport, which Herald does not "
                "speak (stdio and streamable HTTP only); its tools are not available",
                label,
                kind or "unknown",
            )
            continue
        name = server_name(label, taken | set(out))
        if kind == "stdio":
            config = McpServerConfig(
                command=server.command,
                args=list(server.args or ()),
                env={e.name: e.value for e in server.env or ()},
                cwd=cwd,
                start="session",
            )
        else:
            config = McpServerConfig(
                url=server.url,
                headers={h.name: h.value for h in server.headers or ()},
                start="session",
            )
        out[name] = config
    return out
