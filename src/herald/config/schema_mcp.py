"""Config section for MCP: the tool servers Herald connects to (``mcp.servers.<name>``)
and Herald's own MCP server (``mcp.serve``).

A server is either a command Herald starts and talks to over stdio
(``command``/``args``/``env``/``cwd``) or a streamable-HTTP endpoint (``url``/``headers``;
a bearer token comes from the secret named by ``bearer_token_env``, never from this
file). Its tools become the toolset ``mcp-<name>``, named ``mcp_<name>_<tool>``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from herald.config.strict import StrictModel

SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")


class McpToolFilter(StrictModel):
    include: list[str] = Field(
        default_factory=list, description="only these tools of the server (glob); empty = all"
    )
    exclude: list[str] = Field(default_factory=list, description="hide these tools (glob)")


class McpServerConfig(StrictModel):
    enabled: bool = True
    command: str | None = Field(None, description="program to start (stdio transport)")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(
        default_factory=dict, description="extra environment for the command (not secrets)"
    )
    env_secrets: list[str] = Field(
        default_factory=list,
        description="names of secrets (from .env) passed to the command's environment",
    )
    cwd: str | None = None
    url: str | None = Field(None, description="streamable HTTP endpoint, e.g. http://host/mcp")
    headers: dict[str, str] = Field(default_factory=dict, description="extra HTTP headers")
    bearer_token_env: str | None = Field(
        None, description="name of the secret sent as 'Authorization: Bearer …'"
    )
    timeout_seconds: float = Field(60.0, gt=0, description="seconds one tool call may take")
    connect_timeout_seconds: float = Field(
        20.0, gt=0, description="seconds to wait for the server to start and list its tools"
    )
    start: Literal["lazy", "session"] = Field(
        "lazy",
        description="lazy: start on first use (tools known from the last run are offered "
        "without starting it); session: start when the session starts",
    )
    approve: Literal["never", "dangerous", "always"] | None = Field(
        None,
        description="when a call needs a human's approval: never; dangerous (tools not marked "
        "read-only); always. Unset: always, unless every tool says it is read-only",
    )
    tools: McpToolFilter = Field(default_factory=McpToolFilter)
    trusted: bool = Field(
        False,
        description="true: this server's results are trusted content; false (default): they "
        "are untrusted (mcp:<name>) and cannot steer consequential calls (see trust)",
    )

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of `command` (stdio) or `url` (streamable HTTP)")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


class McpServeConfig(StrictModel):
    """`herald mcp serve`: Herald as an MCP server for other clients."""

    token_env: str = Field(
        "HERALD_MCP_TOKEN", description="secret holding the bearer token for --http"
    )
    toolset: str = Field("herald-api", description="toolset bundle agent_run turns get")
    max_iterations: int = Field(30, ge=1, description="default model calls per agent_run")
    relay_approvals: bool = Field(
        True,
        description="put approvals to a client that can answer (elicitation); false: no "
        "client ever approves, agent_run turns follow the unattended policy",
    )
    allow: list[str] = Field(
        default_factory=list,
        description="command patterns (glob) agent_run turns nobody approves may run "
        "beyond the known read-only commands",
    )


class McpConfig(StrictModel):
    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    serve: McpServeConfig = Field(default_factory=McpServeConfig)

    @model_validator(mode="after")
    def _names(self) -> McpConfig:
        for name in self.servers:
            if not SERVER_NAME_RE.match(name):
                raise ValueError(
                    f"MCP server name {name!r} must be letters, digits, '_' or '-' "
                    "(at most 32, starting with a letter or digit)"
                )
        return self
