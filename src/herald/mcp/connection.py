"""One MCP server connection, living on the manager's event loop.

The SDK's `Client` is an async context manager whose transport (a child process
or an HTTP session) must be entered and left by the same task, so each
connection runs one task that enters it, lists the tools, then waits until it
is told to stop. When the server dies that task ends and the connection reads
as ``crashed``; the manager decides whether to restart it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from herald.config import Secrets
    from herald.config.schema_mcp import McpServerConfig

log = logging.getLogger(__name__)

STOPPED, STARTING, READY, FAILED, CRASHED = "stopped", "starting", "ready", "failed", "crashed"
MAX_TOOL_PAGES = 50


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False
    destructive: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "read_only": self.read_only,
            "destructive": self.destructive,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RemoteTool:
        return cls(
            name=str(data["name"]),
            description=str(data.get("description") or ""),
            input_schema=dict(data.get("input_schema") or {"type": "object"}),
            read_only=bool(data.get("read_only", False)),
            destructive=bool(data.get("destructive", True)),
        )


def _remote_tool(tool: Any) -> RemoteTool:
    hints = tool.annotations
    read_only = bool(hints is not None and hints.read_only_hint)
    # The spec's default: a tool that is not read-only may be destructive.
    destructive = not read_only and not (hints is not None and hints.destructive_hint is False)
    return RemoteTool(
        name=tool.name,
        description=(tool.description or "").strip(),
        input_schema=dict(tool.input_schema or {"type": "object"}),
        read_only=read_only,
        destructive=destructive,
    )


def describe_exception(exc: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap them in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ServerConnection:
    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        secrets: Secrets | None,
        errlog: IO[str] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.secrets = secrets
        self.errlog = errlog
        self.state = STOPPED
        self.error = ""
        self.tools: list[RemoteTool] = []
        self.server_label = ""
        self.client: Any = None
        self._errlog_mark: int | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    # ---- lifecycle (coroutines run on the manager's loop) ----------------------------------

    async def start(self) -> None:
        """Connect and list the tools; on failure `state` is ``failed`` and `error` says why."""
        await self.stop()
        self.state, self.error, self.tools = STARTING, "", []
        self._errlog_mark = _tell(self.errlog)
        ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(ready, self._stop), name=f"mcp-{self.name}")
        try:
            await asyncio.wait_for(ready.wait(), self.config.connect_timeout_seconds)
        except TimeoutError:
            self._task.cancel()
            self.state = FAILED
            self.error = (
                f"did not start within {self.config.connect_timeout_seconds:g} s "
                "(raise mcp.servers.<name>.connect_timeout_seconds if it is just slow)"
            )

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 5)
        except BaseException:  # a transport that will not close cleanly is abandoned
            task.cancel()
        if self.state in (READY, STARTING):
            self.state = STOPPED

    async def _run(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        from mcp import Client

        try:
            async with AsyncExitStack() as stack:
                target = await self._target(stack)
                client = Client(target, client_info=_client_info())
                await stack.enter_async_context(client)
                self.tools = await self._list_tools(client)
                info = client.server_info
                self.server_label = f"{info.name} {info.version}".strip() if info else ""
                self.client = client
                self.state = READY
                ready.set()
                await stop.wait()
        except asyncio.CancelledError:
            if self.state == STARTING:
                self.state = FAILED
            elif self.state == READY and not stop.is_set():
                self.state, self.error = CRASHED, "the connection was cancelled"
        except BaseException as exc:  # anything the transport or server raises
            message = describe_exception(exc)
            log.debug("MCP server %s ended: %s", self.name, message, exc_info=True)
            if self.state == READY and not stop.is_set():
                self.state, self.error = CRASHED, f"the server stopped: {message}"
            elif self.state == STARTING:
                self.state, self.error = FAILED, self._start_error(message)
        finally:
            self.client = None
            if self.state == READY:  # a clean stop, or the server closed the connection
                self.state = STOPPED if stop.is_set() else CRASHED
                if self.state == CRASHED:
                    self.error = "the server closed the connection"
            ready.set()

    def _start_error(self, message: str) -> str:
        if self.config.command is not None:
            return f"could not start `{self.config.command}`: {message}{self._stderr_tail()}"
        return f"could not connect to {self.config.url}: {message}"

    def _stderr_tail(self, lines: int = 3) -> str:
        """The last lines the server wrote to stderr since this start (its own words on
        why it failed are usually the most useful part)."""
        if self.errlog is None or self._errlog_mark is None:
            return ""
        try:
            self.errlog.flush()
            with open(self.errlog.name, encoding="utf-8", errors="replace") as fh:
                fh.seek(self._errlog_mark)
                tail = [line.strip() for line in fh.read().splitlines() if line.strip()]
        except (OSError, AttributeError, ValueError):
            return ""
        return f" (stderr: {' | '.join(tail[-lines:])})" if tail else ""

    async def _target(self, stack: AsyncExitStack) -> Any:
        cfg = self.config
        if cfg.command is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            env = dict(cfg.env)
            for secret in cfg.env_secrets:
                value = self.secrets.get(secret) if self.secrets is not None else None
                if value is None:
                    raise LookupError(f"secret {secret} (env_secrets) is not set in .env")
                env[secret] = value
            # The child gets the parent's PATH etc. plus what the config names (the SDK merges
            # over a safe default environment, so no secrets leak by default).
            if "PYTHONPATH" in os.environ and "PYTHONPATH" not in env:
                env["PYTHONPATH"] = os.environ["PYTHONPATH"]
            params = StdioServerParameters(
                command=cfg.command, args=list(cfg.args), env=env or None, cwd=cfg.cwd
            )
            if self.errlog is not None:
                return stdio_client(params, errlog=self.errlog)
            return stdio_client(params)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = dict(cfg.headers)
        if cfg.bearer_token_env:
            token = self.secrets.get(cfg.bearer_token_env) if self.secrets is not None else None
            if not token:
                raise LookupError(
                    f"secret {cfg.bearer_token_env} (bearer_token_env) is not set in .env"
                )
            headers["Authorization"] = f"Bearer {token}"
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers or None))
        assert cfg.url is not None
        return streamable_http_client(cfg.url, http_client=http)

    async def _list_tools(self, client: Any) -> list[RemoteTool]:
        tools: list[RemoteTool] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(_remote_tool(t) for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    # ---- calls ------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        client = self.client
        if client is None or self.state != READY:
            raise ConnectionError(f"MCP server {self.name} is not connected ({self.state})")
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        try:
            return await client.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:  # the server died under the call
                await self._mark_crashed("the server closed the connection during a call")
            raise

    async def _mark_crashed(self, reason: str) -> None:
        if self.state == READY:
            self.state, self.error = CRASHED, reason
        task, self._task = self._task, None
        if task is not None:
            task.cancel()


def _tell(handle: IO[str] | None) -> int | None:
    if handle is None:
        return None
    try:
        handle.flush()
        return handle.seek(0, os.SEEK_END)
    except (OSError, ValueError):
        return None


def _client_info() -> Any:
    from mcp import Implementation

    from herald import __version__

    return Implementation(name="herald", version=__version__)
