"""MCP client (L2): the tool servers in ``mcp.servers`` become per-agent tools.

`agent_registry(settings)` gives an agent a registry overlay carrying the
configured servers' tools (``mcp_<server>_<tool>``, toolset ``mcp-<server>``),
appended after the built-ins. `McpManager` runs the connections on its own
event loop thread. Herald's own MCP server lives in `herald.mcp.server` (L6).
"""

from herald.mcp.approval import CallRefused, effective_policy, gate_call, needs_approval
from herald.mcp.connection import RemoteTool, ServerConnection
from herald.mcp.manager import McpManager, ServerStatus, tool_allowed
from herald.mcp.overlay import (
    STATUS_TOOL,
    McpToolOverlay,
    agent_registry,
    definition_schema,
    mcp_failures,
    tool_name,
    toolset_name,
)
from herald.mcp.results import describe_block, result_text, to_tool_result

__all__ = [
    "STATUS_TOOL",
    "CallRefused",
    "McpManager",
    "McpToolOverlay",
    "RemoteTool",
    "ServerConnection",
    "ServerStatus",
    "agent_registry",
    "definition_schema",
    "describe_block",
    "effective_policy",
    "gate_call",
    "mcp_failures",
    "needs_approval",
    "result_text",
    "to_tool_result",
    "tool_allowed",
    "tool_name",
    "toolset_name",
]
