"""`McpManager`: the configured MCP servers of one agent, behind a synchronous API.

One event loop thread per manager runs every connection (see `loop.py`). Tool
handlers call `call()` from the engine's threads and wait on a concurrent
future, so an interrupt (``ToolContext.cancel``) or the server's
``timeout_seconds`` cancels the request.

Starting: ``start: session`` servers are started in the background when the
manager is built; ``lazy`` ones when their tools are first needed. A lazy server
that ran before is offered with the tools it listed last time (cached under
``cache/mcp/``) and only started on its first call. A server that cannot start
never blocks a turn for longer than its ``connect_timeout_seconds``: its tools
are missing and `status()` says why.

Crashes: a server found dead is restarted at most once per turn (the turn is the
last user message of the session); after that the call reports it. A call the
server died under is never retried (it may have had effects), but the server is
restarted for the next call.
"""

from __future__ import annotations

import atexit
import fnmatch
import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from herald.mcp.approval import effective_policy, gate_call
from herald.mcp.connection import (
    CRASHED,
    FAILED,
    READY,
    STARTING,
    STOPPED,
    RemoteTool,
    ServerConnection,
    describe_exception,
)
from herald.mcp.loop import CallCancelled, CallTimedOut, LoopThread
from herald.mcp.results import to_tool_result
from herald.tools import ToolArgumentError, ToolContext, ToolResult

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets
    from herald.config.schema_mcp import McpServerConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerStatus:
    name: str
    transport: str
    state: str  # stopped | starting | ready | failed | crashed | disabled | cached
    error: str
    tools: tuple[str, ...]
    approve: str
    server: str = ""


def tool_allowed(name: str, cfg: McpServerConfig) -> bool:
    include, exclude = cfg.tools.include, cfg.tools.exclude
    if include and not any(fnmatch.fnmatchcase(name, p) for p in include):
        return False
    return not any(fnmatch.fnmatchcase(name, p) for p in exclude)


class McpManager:
    def __init__(
        self,
        servers: dict[str, McpServerConfig],
        *,
        secrets: Secrets | None = None,
        home: HeraldHome | None = None,
    ) -> None:
        self.configs = {n: c for n, c in servers.items()}
        self.home = home
        self._loop = LoopThread()
        self._lock = threading.RLock()
        self._errlogs: list[IO[str]] = []
        self._attempted: set[str] = set()
        self._restart_turn: dict[str, Any] = {}
        self.connections: dict[str, ServerConnection] = {}
        for name, cfg in self.configs.items():
            if cfg.enabled:
                self.connections[name] = ServerConnection(
                    name, cfg, secrets, errlog=self._open_errlog(name)
                )
        self._pending: dict[str, Any] = {}
        self._closed = False
        atexit.register(self.close)  # stdio servers must not outlive Herald
        for name, conn in self.connections.items():
            if conn.config.start == "session":
                self._begin_start(name)

    @classmethod
    def from_config(
        cls, config: HeraldConfig, *, secrets: Secrets | None, home: HeraldHome | None
    ) -> McpManager:
        return cls(config.mcp.servers, secrets=secrets, home=home)

    # ---- starting -----------------------------------------------------------------------

    def _open_errlog(self, name: str) -> IO[str] | None:
        if self.home is None:
            return None
        try:
            self.home.logs_dir.mkdir(parents=True, exist_ok=True)
            handle = open(self.home.logs_dir / f"mcp-{name}.log", "a", encoding="utf-8")  # noqa: SIM115
        except OSError:
            return None
        self._errlogs.append(handle)
        return handle

    def _begin_start(self, name: str) -> None:
        with self._lock:
            if name in self._pending and not self._pending[name].done():
                return
            self._attempted.add(name)
            self._pending[name] = self._loop.submit(self.connections[name].start())

    def ensure_started(self, name: str) -> ServerConnection:
        """Start `name` if it is not running and wait (bounded by its connect timeout)."""
        conn = self.connections[name]
        if conn.state == READY:
            return conn
        if conn.state in (STOPPED, CRASHED, FAILED) and not self._start_in_flight(name):
            if conn.state == FAILED and name in self._attempted:
                return conn  # failed before: do not hold every turn up retrying it
            self._begin_start(name)
        future = self._pending.get(name)
        if future is not None:
            try:
                future.result(conn.config.connect_timeout_seconds + 5)
            except Exception as exc:  # the start coroutine itself broke
                conn.state, conn.error = FAILED, describe_exception(exc)
        if conn.state == READY:
            self._save_cache(name, conn.tools)
        return conn

    def begin_needed_starts(self) -> None:
        """Start, in parallel, every server whose tools are not known yet, so listing
        the tools of several servers waits for the slowest one, not for their sum."""
        for name, conn in self.connections.items():
            if conn.state != STOPPED or name in self._attempted:
                continue
            if conn.config.start == "lazy" and self._load_cache(name) is not None:
                continue
            self._begin_start(name)

    def _start_in_flight(self, name: str) -> bool:
        future = self._pending.get(name)
        return future is not None and not future.done()

    def restart(self, name: str) -> ServerConnection:
        self._attempted.discard(name)
        conn = self.connections[name]
        conn.state = STOPPED
        return self.ensure_started(name)

    # ---- tools --------------------------------------------------------------------------

    def tools(self, name: str) -> list[RemoteTool]:
        """The server's tools after include/exclude: live when running; for a lazy server
        not started yet, the ones it listed last time (or start it now to learn them)."""
        conn = self.connections.get(name)
        if conn is None:
            return []
        if conn.state != READY and name not in self._attempted and conn.config.start == "lazy":
            cached = self._load_cache(name)
            if cached is not None:
                return [t for t in cached if tool_allowed(t.name, conn.config)]
        if conn.state == CRASHED:
            # Still offered: a call restarts it (once per turn) or says why it cannot.
            return [t for t in conn.tools if tool_allowed(t.name, conn.config)]
        if conn.state != READY:
            conn = self.ensure_started(name)
        return [t for t in conn.tools if tool_allowed(t.name, conn.config)]

    def policy(self, name: str) -> str:
        conn = self.connections[name]
        tools = conn.tools or (self._load_cache(name) or [])
        return effective_policy(conn.config.approve, [t.read_only for t in tools])

    def _cache_path(self, name: str) -> Path | None:
        if self.home is None:
            return None
        return self.home.cache_dir / "mcp" / f"{name}.json"

    def _cache_key(self, name: str) -> str:
        cfg = self.configs[name]
        return json.dumps([cfg.command, cfg.args, cfg.url, cfg.cwd], default=str)

    def _save_cache(self, name: str, tools: list[RemoteTool]) -> None:
        path = self._cache_path(name)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            data = {"key": self._cache_key(name), "tools": [t.to_json() for t in tools]}
            path.write_text(json.dumps(data), encoding="utf-8")
        except OSError as exc:
            log.debug("could not cache the tools of MCP server %s: %s", name, exc)

    def _load_cache(self, name: str) -> list[RemoteTool] | None:
        path = self._cache_path(name)
        if path is None or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("key") != self._cache_key(name):
                return None
            return [RemoteTool.from_json(t) for t in data["tools"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    # ---- calls --------------------------------------------------------------------------

    def call(
        self,
        name: str,
        tool: RemoteTool,
        tool_name: str,
        arguments: dict[str, Any],
        ctx: ToolContext,
    ) -> ToolResult | str:
        conn = self.connections[name]
        gate_call(
            ctx,
            server=name,
            tool=tool.name,
            tool_name=tool_name,
            arguments=arguments,
            policy=self.policy(name),
            read_only=tool.read_only,
        )
        if conn.state != READY:
            conn = self._revive(name, ctx)
            if conn.state != READY:
                raise ToolArgumentError(self.unavailable_message(name))
        timeout = conn.config.timeout_seconds
        try:
            result = self._loop.run(
                conn.call(tool.name, arguments), timeout=timeout, cancel=ctx.cancel
            )
        except CallCancelled:
            raise ToolArgumentError(
                f"interrupted: the call to {tool_name} was cancelled before it finished"
            ) from None
        except CallTimedOut:
            raise ToolArgumentError(
                f"{tool_name} did not finish within {timeout:g} s "
                f"(mcp.servers.{name}.timeout_seconds); the request was cancelled"
            ) from None
        except Exception as exc:
            if conn.state == CRASHED:
                why = conn.error
                note = self._after_crash(name, ctx)
                raise ToolArgumentError(
                    f"the MCP server {name} stopped during the call to {tool_name} "
                    f"({why}); the call was not retried because it may have had "
                    f"effects. {note}"
                ) from None
            raise ToolArgumentError(f"{tool_name} failed: {describe_exception(exc)}") from None
        return to_tool_result(result)

    def _revive(self, name: str, ctx: ToolContext) -> ServerConnection:
        conn = self.connections[name]
        if conn.state == CRASHED:
            if not self._may_restart(name, ctx):
                return conn
            return self.restart(name)
        return self.ensure_started(name)

    def _after_crash(self, name: str, ctx: ToolContext) -> str:
        if not self._may_restart(name, ctx):
            return "It already crashed once this turn, so it was not restarted."
        conn = self.restart(name)
        if conn.state == READY:
            return "The server was restarted; check whether the call took effect before retrying."
        return f"Restarting it failed: {conn.error}"

    def _may_restart(self, name: str, ctx: ToolContext) -> bool:
        """One automatic restart per server per turn (with no session to tell turns apart,
        one restart in all)."""
        turn = _turn_key(ctx)
        with self._lock:
            if name in self._restart_turn and self._restart_turn[name] == turn:
                return False
            self._restart_turn[name] = turn
        return True

    # ---- reporting ----------------------------------------------------------------------

    def unavailable_message(self, name: str) -> str:
        conn = self.connections.get(name)
        if conn is None:
            return f"MCP server {name} is disabled or not configured"
        reason = conn.error or conn.state
        return (
            f"MCP server {name} is not available ({reason}); its tools cannot be used now. "
            f"`herald mcp test {name}` shows what is wrong; see logs/mcp-{name}.log."
        )

    def status(self, *, start: bool = False) -> list[ServerStatus]:
        out: list[ServerStatus] = []
        for name, cfg in self.configs.items():
            conn = self.connections.get(name)
            if conn is None:
                out.append(
                    ServerStatus(name, cfg.transport, "disabled", "", (), cfg.approve or "-")
                )
                continue
            if start:
                self.ensure_started(name)
            state = conn.state
            tools = [t for t in conn.tools if tool_allowed(t.name, cfg)]
            if state not in (READY, STARTING) and name not in self._attempted:
                cached = self._load_cache(name)
                if cached is not None:
                    state = "cached"
                    tools = [t for t in cached if tool_allowed(t.name, cfg)]
            out.append(
                ServerStatus(
                    name=name,
                    transport=cfg.transport,
                    state=state,
                    error=conn.error,
                    tools=tuple(t.name for t in tools),
                    approve=self.policy(name),
                    server=conn.server_label,
                )
            )
        return out

    def failures(self) -> dict[str, str]:
        """Servers that were tried and are not usable, with why."""
        return {
            name: conn.error or conn.state
            for name, conn in self.connections.items()
            if conn.state in (FAILED, CRASHED) and name in self._attempted
        }

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        for name, conn in self.connections.items():
            try:
                self._loop.run(conn.stop(), timeout=8)
            except Exception as exc:  # shutting down: report and go on
                log.debug("stopping MCP server %s: %s", name, exc)
        self._loop.close()
        for handle in self._errlogs:
            handle.close()


def _turn_key(ctx: ToolContext) -> Any:
    """The current turn: the id of the session's last user message (None if unknown)."""
    if ctx.store is None or ctx.session_id is None:
        return None
    try:
        messages = ctx.store.get_messages(ctx.session_id)
    except Exception:  # no history to look at: every crash counts as this turn's
        return None
    for message in reversed(messages):
        if message.role == "user":
            return (ctx.session_id, message.id)
    return (ctx.session_id, None)
