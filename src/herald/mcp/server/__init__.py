"""Herald as an MCP server (L6): `herald mcp serve` over stdio or streamable HTTP.

Other MCP clients (agents, IDEs) give Herald tasks with ``agent_run`` and read its
sessions, memory and skills. Approvals are relayed to the client through
elicitation, or refused when it cannot answer; HTTP needs a bearer token.
"""

from herald.mcp.server.agent_run import (
    AgentRunner,
    ApprovalAnswer,
    RunRequest,
    close_session_agent,
)
from herald.mcp.server.app import build_server
from herald.mcp.server.reading import HeraldReader
from herald.mcp.server.transport import (
    BearerAuth,
    ServeError,
    http_app,
    is_loopback,
    parse_address,
    serve_http,
    serve_stdio,
)

__all__ = [
    "AgentRunner",
    "ApprovalAnswer",
    "BearerAuth",
    "HeraldReader",
    "RunRequest",
    "ServeError",
    "build_server",
    "close_session_agent",
    "http_app",
    "is_loopback",
    "parse_address",
    "serve_http",
    "serve_stdio",
]
