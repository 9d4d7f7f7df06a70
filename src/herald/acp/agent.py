"""Herald as an ACP agent: what an editor (Zed and others) talks to over stdio.

- ``session/new`` creates a Herald session whose cwd is the editor's working
  directory (the ACP session id is the Herald session id); ``session/load``
  resumes one and replays its messages.
- ``session/prompt`` runs one turn: reply text streams as agent message chunks,
  every tool call is a tool-call start and an update when it ends; the response's
  stop reason maps Herald's exit reason.
- An action that needs approval becomes ``session/request_permission`` (allow once /
  allow for the session / reject); no answer or a cancelled request is a denial.
- ``session/cancel`` interrupts the running turn (``TurnHandle.interrupt``).

Updates leave in the order the engine produced them (one sender per turn), and a
prompt's response is sent only after all of its updates.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.safety import ApprovalPrompt
    from herald.state import StateStore

log = logging.getLogger(__name__)

TOOL_OUTPUT_CHARS = 4000
PERMISSION_CHOICES = {
    "once": ("allow_once", "Allow once"),
    "session": ("allow_always", "Allow for this session"),
    "always": ("allow_always", "Always allow"),
    "deny": ("reject_once", "Reject"),
}
TOOL_KINDS = {
    "read_file": "read",
    "search_files": "search",
    "write_file": "edit",
    "patch": "edit",
    "terminal": "execute",
    "process": "execute",
    "web_search": "fetch",
    "web_extract": "fetch",
    "todo": "think",
}


def stop_reason(exit_reason: str) -> str:
    if exit_reason in ("interrupted_by_user", "interrupted_during_api_call"):
        return "cancelled"
    if exit_reason in ("max_iterations_reached", "budget_exhausted", "error_near_max_iterations"):
        return "max_turn_requests"
    if exit_reason == "content_policy_blocked":
        return "refusal"
    return "end_turn"


def prompt_text(blocks: list[Any]) -> str:
    """The user's prompt as text: text blocks, embedded text resources inline, other
    resources and media referenced by a short description."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[file: {block.uri}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"[{resource.uri}]\n{text}")
            else:
                parts.append(f"[binary resource {resource.uri}, not shown]")
        else:
            parts.append(f"[{kind or 'unknown'} content, not shown]")
    return "\n\n".join(parts)


@dataclass
class AcpSession:
    session_id: str
    agent: Any
    registry: Any
    cwd: str
    handle: Any = None
    calls: dict[str, collections.deque[str]] = field(default_factory=dict)
    last_call: str | None = None
    counter: int = 0


class TurnRelay:
    """Engine-thread events to ordered ACP session updates."""

    def __init__(self, conn: Any, session: AcpSession, loop: asyncio.AbstractEventLoop) -> None:
        self.conn = conn
        self.session = session
        self.loop = loop
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.streamed = False
        self._lock = threading.Lock()

    def _put(self, update: Any) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, update)

    async def sender(self) -> None:
        while True:
            update = await self.queue.get()
            if update is None:
                return
            try:
                await self.conn.session_update(session_id=self.session.session_id, update=update)
            except Exception as exc:  # the editor went away: the turn goes on
                log.debug("ACP session update failed: %s", exc)

    def text(self, delta: str) -> None:
        from acp import update_agent_message_text

        if delta:
            self.streamed = True
            self._put(update_agent_message_text(delta))

    def tool_start(self, name: str, raw_arguments: str) -> None:
        from acp import start_tool_call

        with self._lock:
            self.session.counter += 1
            call_id = f"call_{self.session.counter}"
            self.session.calls.setdefault(name, collections.deque()).append(call_id)
            self.session.last_call = call_id
        self._put(
            start_tool_call(
                call_id,
                name,
                kind=TOOL_KINDS.get(name, "other"),  # type: ignore[arg-type]
                status="in_progress",
                raw_input=raw_arguments,
            )
        )

    def tool_end(self, name: str, result: str, is_error: bool) -> None:
        from acp import text_block, tool_content, update_tool_call

        with self._lock:
            queue = self.session.calls.get(name)
            call_id = queue.popleft() if queue else None
        if call_id is None:
            return
        output = result if len(result) <= TOOL_OUTPUT_CHARS else result[:TOOL_OUTPUT_CHARS] + "…"
        self._put(
            update_tool_call(
                call_id,
                status="failed" if is_error else "completed",
                content=[tool_content(text_block(output))],
            )
        )

    def finish(self) -> None:
        self._put(None)


class HeraldAcpAgent:
    def __init__(self, settings: Settings, store: StateStore) -> None:
        self.settings = settings
        self.store = store
        self.conn: Any = None
        self.sessions: dict[str, AcpSession] = {}
        self.tools: Any = None  # a ToolRegistry, made when the first session opens

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # ---- lifecycle ----------------------------------------------------------------------

    async def initialize(self, protocol_version: int, **_: Any) -> Any:
        from acp import PROTOCOL_VERSION
        from acp.schema import (
            AgentCapabilities,
            Implementation,
            InitializeResponse,
            McpCapabilities,
        )

        from herald import __version__

        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                # the editor's MCP servers: stdio (always) and streamable HTTP, not SSE
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="herald", title="Herald", version=__version__),
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any) -> Any:
        from acp.schema import NewSessionResponse

        session = await asyncio.to_thread(self._open, cwd, None, mcp_servers)
        return NewSessionResponse(session_id=session.session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> Any:
        from acp import update_agent_message_text, update_user_message_text
        from acp.schema import LoadSessionResponse

        try:
            resolved = self.store.resolve_session_id(session_id)
        except LookupError as exc:
            from acp import RequestError

            raise RequestError.invalid_params({"session_id": str(exc).strip("'\"")}) from None
        session = await asyncio.to_thread(self._open, cwd, resolved, mcp_servers)
        for message in await asyncio.to_thread(self.store.get_messages, resolved):
            if not message.content or message.role not in ("user", "assistant"):
                continue
            update = (
                update_user_message_text(message.content)
                if message.role == "user"
                else update_agent_message_text(message.content)
            )
            await self.conn.session_update(session_id=session.session_id, update=update)
        return LoadSessionResponse()

    def _open(
        self, cwd: str, session_id: str | None, mcp_servers: list[Any] | None = None
    ) -> AcpSession:
        from herald.engine import Agent, AgentOptions
        from herald.toolbox import agent_tools, builtin_tools

        if self.tools is None:  # the server's tools, shared by its sessions' agents
            self.tools = builtin_tools()
        settings = self._with_editor_servers(mcp_servers, cwd)
        agent = Agent.open(
            settings,
            self.store,
            session_id=session_id,
            source="acp",
            title="",
            tools=agent_tools(settings, base=self.tools),
            options=AgentOptions(cwd=cwd),
        )
        assert agent.session_id is not None
        session_id = agent.session_id
        session = AcpSession(session_id=session_id, agent=agent, registry=agent.registry, cwd=cwd)
        self.sessions[session_id] = session
        return session

    def _with_editor_servers(self, mcp_servers: list[Any] | None, cwd: str) -> Settings:
        """The settings for one session: the configured MCP servers plus the editor's."""
        if not mcp_servers:
            return self.settings
        import dataclasses

        from herald.acp.servers import editor_servers

        config = self.settings.config.model_copy(deep=True)
        configured = config.mcp.servers
        config.mcp.servers = {
            **configured,
            **editor_servers(mcp_servers, cwd=cwd, taken=set(configured)),
        }
        return dataclasses.replace(self.settings, config=config)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            from acp import RequestError

            raise RequestError.invalid_params(
                {"session_id": f"no open session {session_id!r}; create or load it first"}
            )
        return session

    # ---- a turn -------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        from acp import update_agent_message_text
        from acp.schema import PromptResponse

        from herald.engine import Humans, TurnCallbacks

        session = self._session(session_id)
        loop = asyncio.get_running_loop()
        relay = TurnRelay(self.conn, session, loop)
        sender = asyncio.create_task(relay.sender())
        callbacks = TurnCallbacks(
            on_text_delta=relay.text, on_tool_start=relay.tool_start, on_tool_end=relay.tool_end
        )
        humans = Humans(approve=self._permission_asker(session, loop))
        handle = session.agent.start_turn(prompt_text(prompt), callbacks=callbacks, humans=humans)
        session.handle = handle
        try:
            result = await asyncio.to_thread(handle.result)
        finally:
            session.handle = None
        if not relay.streamed and result.final_text:
            relay._put(update_agent_message_text(result.final_text))
        elif not result.final_text and result.error:
            relay._put(update_agent_message_text(f"[{result.exit_reason.value}] {result.error}"))
        relay.finish()
        await sender
        return PromptResponse(stop_reason=stop_reason(result.exit_reason.value))

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.handle is not None:
            session.handle.interrupt()

    def _permission_asker(self, session: AcpSession, loop: asyncio.AbstractEventLoop):
        conn = self.conn

        def approve(prompt: ApprovalPrompt) -> str | None:
            from acp.schema import PermissionOption, ToolCallUpdate

            options = [
                PermissionOption(option_id=choice, name=label, kind=kind)  # type: ignore[arg-type]
                for choice in prompt.choices
                if choice in PERMISSION_CHOICES
                for kind, label in [PERMISSION_CHOICES[choice]]
            ]
            tool_call = ToolCallUpdate(
                tool_call_id=session.last_call or "approval",
                title=prompt.command,
                status="pending",
                raw_input={
                    "command": prompt.command,
                    "why": f"{prompt.description} [{prompt.rule}]",
                },
            )
            future = asyncio.run_coroutine_threadsafe(
                conn.request_permission(
                    session_id=session.session_id, tool_call=tool_call, options=options
                ),
                loop,
            )
            try:
                response = future.result()
            except Exception as exc:  # the editor could not ask: a denial
                log.warning("ACP permission request failed: %s", exc)
                return None
            outcome = response.outcome
            if getattr(outcome, "outcome", None) != "selected":
                return None
            return outcome.option_id if outcome.option_id in PERMISSION_CHOICES else None

        return approve

    def close(self) -> None:
        for session in self.sessions.values():
            try:
                session.agent.close()  # and its tools: an MCP overlay stops its servers
            except Exception as exc:  # shutting down: report and go on
                log.debug("closing ACP session %s: %s", session.session_id, exc)


def run_acp(settings: Settings) -> None:
    """Serve ACP on stdin/stdout until the editor closes the connection."""
    import acp

    from herald.state import StateStore

    with StateStore(settings.home.state_db) as store:
        agent = HeraldAcpAgent(settings, store)
        try:
            asyncio.run(acp.run_agent(agent))
        finally:
            agent.close()
