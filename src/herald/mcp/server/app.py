"""The MCP server object: Herald's tools and resources for other MCP clients.

Tools: ``agent_run`` (a Herald turn; see `agent_run.py`), the read-only
``sessions_list``, ``session_search``, ``session_read``, ``memory_read``,
``skills_list``, ``skill_read``, and ``send_message`` (through a running
gateway). Resources (read-only): ``herald://sessions/recent`` and
``herald://memory/MEMORY.md`` / ``herald://memory/USER.md``.

Blocking work runs in worker threads, so one slow turn never stalls the others.
Errors a tool raises become MCP error results (``isError``) carrying the message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import InputRequiredResult, ToolAnnotations

from herald.mcp.server.agent_run import AgentRunner, RunRequest
from herald.mcp.server.reading import HeraldReader

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.state import StateStore

INSTRUCTIONS = (
    "Herald is a personal AI agent with long-term memory, skills and tools. Use agent_run to "
    "give it a task (continue a conversation with session_id); the read-only tools look into "
    "its past sessions, memory and skills."
)


def build_server(settings: Settings, store: StateStore) -> MCPServer:
    from herald import __version__
    from herald.tools import ToolArgumentError

    server = MCPServer(
        "herald", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    reader = HeraldReader(settings, store)
    runner = AgentRunner(settings, store)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    async def blocking(fn: Callable[..., str], *args: Any) -> str:
        try:
            return await asyncio.to_thread(fn, *args)
        except ToolArgumentError as exc:  # a message meant for the caller
            raise ToolError(str(exc)) from None

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
        structured_output=False,
    )
    async def agent_run(
        prompt: str,
        ctx: Context,
        session_id: str | None = None,
        max_iterations: int | None = None,
        max_cost_usd: float | None = None,
    ) -> str | InputRequiredResult:
        """Give Herald a task and wait for its answer. Returns JSON with final_text,
        exit_reason, error (what stopped it, or null) and session_id (pass it back as
        session_id to continue). max_cost_usd: no model call whose estimated cost would
        pass it is made. Progress
        notifications report its tool activity; actions that need approval are asked
        through elicitation, or refused when this client cannot answer."""
        if not prompt.strip() and ctx.request_state is None:
            raise ToolError("prompt is empty: say what Herald should do")
        request = RunRequest(prompt, session_id, max_iterations, max_cost_usd)
        try:
            return await runner.call(request, ctx)
        except LookupError as exc:  # an unknown session id prefix
            raise ToolError(str(exc).strip("'\"")) from None

    @server.tool(annotations=read_only)
    async def sessions_list(limit: int = 20) -> str:
        """Recent Herald sessions (id, title, source, model, last exit reason), newest first."""
        return await blocking(reader.sessions_list, limit)

    @server.tool(annotations=read_only)
    async def session_search(query: str, limit: int | None = None) -> str:
        """Search Herald's past conversations by words; returns the best-matching sessions
        with the messages around the best hit."""
        return await blocking(reader.session_search, query, limit)

    @server.tool(annotations=read_only)
    async def session_read(
        session_id: str, around_message_id: int | None = None, limit: int | None = None
    ) -> str:
        """Read a session (id or unique prefix), or a window around one of its messages."""
        return await blocking(reader.session_read, session_id, around_message_id, limit)

    @server.tool(annotations=read_only)
    async def memory_read(file: str = "MEMORY") -> str:
        """Herald's memory file: MEMORY (what it noted) or USER (what it knows about you)."""
        return await blocking(reader.memory_read, file)

    @server.tool(annotations=read_only)
    async def skills_list(tag: str | None = None, category: str | None = None) -> str:
        """Herald's skills (saved procedures), optionally by tag or category."""
        return await blocking(reader.skills_list, tag, category)

    @server.tool(annotations=read_only)
    async def skill_read(name: str, file: str | None = None) -> str:
        """A skill's SKILL.md, or one of its files."""
        return await blocking(reader.skill_read, name, file)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    async def send_message(platform: str, chat_id: str, text: str) -> str:
        """Send a message through the running Herald gateway (for example to a Telegram chat)."""
        return await blocking(reader.send_message, platform, chat_id, text)

    @server.resource("herald://sessions/recent", mime_type="application/json")
    async def recent_sessions() -> str:
        """The 20 most recent sessions."""
        return await asyncio.to_thread(reader.sessions_list, 20)

    @server.resource("herald://memory/MEMORY.md", mime_type="text/markdown")
    async def memory_file() -> str:
        """What Herald has noted for itself."""
        return await asyncio.to_thread(reader.memory_read, "MEMORY")

    @server.resource("herald://memory/USER.md", mime_type="text/markdown")
    async def user_file() -> str:
        """What Herald knows about you."""
        return await asyncio.to_thread(reader.memory_read, "USER")

    return server
