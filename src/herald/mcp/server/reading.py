"""The read-only side of Herald's MCP server: sessions, memory files and skills.

Each function is synchronous and returns a string (JSON for lists). Session
search and reading, and the skill tools, reuse Herald's own tools through the
registry, so an MCP client reads exactly what the model would.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from herald.config.schema_identities import OWNER
from herald.tools import ToolArgumentError, ToolContext

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.state import StateStore

MEMORY_FILES = {"MEMORY": "MEMORY.md", "USER": "USER.md"}
SESSIONS_MAX = 100


class HeraldReader:
    def __init__(self, settings: Settings, store: StateStore) -> None:
        self.settings = settings
        self.store = store
        self._tools: Any = None

    def _context(self) -> ToolContext:
        s = self.settings
        return ToolContext(
            home=s.home,
            config=s.config,
            secrets=s.secrets,
            store=self.store,
            surface="mcp",
            identity=OWNER,
        )

    def _builtin(self, name: str, args: dict[str, Any]) -> str:
        if self._tools is None:  # the reader's own registry, made on first use
            from herald.toolbox import builtin_tools

            self._tools = builtin_tools()
        result = self._tools.dispatch(name, args, self._context(), run_hooks=False)
        if result.is_error:
            raise ToolArgumentError(result.content.removeprefix("[TOOL_ERROR]").strip())
        return result.content

    def sessions_list(self, limit: int = 20) -> str:
        # MCP clients are the owner's: they list the owner's sessions, as session_search
        # (through `_context`, identity owner) reads only those.
        records = self.store.list_sessions(limit=max(1, min(limit, SESSIONS_MAX)), identity=OWNER)
        return json.dumps(
            [
                {
                    "id": r.id,
                    "title": r.title,
                    "source": r.source,
                    "model": r.model,
                    "updated_at": r.updated_at,
                    "last_exit_reason": r.last_exit_reason,
                }
                for r in records
            ],
            ensure_ascii=False,
        )

    def session_search(self, query: str, limit: int | None = None) -> str:
        args: dict[str, Any] = {"query": query}
        if limit is not None:
            args["limit"] = limit
        return self._builtin("session_search", args)

    def session_read(
        self, session_id: str, around_message_id: int | None = None, limit: int | None = None
    ) -> str:
        args: dict[str, Any] = {"session_id": session_id}
        if around_message_id is not None:
            args["around_message_id"] = around_message_id
        if limit is not None:
            args["limit"] = limit
        return self._builtin("session_search", args)

    def memory_read(self, file: str = "MEMORY") -> str:
        key = file.upper().removesuffix(".MD")
        if key not in MEMORY_FILES:
            raise ToolArgumentError(f"file must be MEMORY or USER, not {file!r}")
        home = self.settings.home
        # The MCP server is the owner's: USER.md is the owner's own.
        path = home.user_memory_file() if key == "USER" else home.memories_dir / MEMORY_FILES[key]
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return f"({MEMORY_FILES[key]} is empty: nothing remembered yet)"

    def skills_list(self, tag: str | None = None, category: str | None = None) -> str:
        args = {k: v for k, v in {"tag": tag, "category": category}.items() if v}
        return self._builtin("skills_list", args)

    def skill_read(self, name: str, file: str | None = None) -> str:
        args = {"name": name, **({"file": file} if file else {})}
        return self._builtin("skill_view", args)

    def send_message(self, platform: str, chat_id: str, text: str) -> str:
        from herald.state.run_files import RunFiles

        status = RunFiles(self.settings.home).read_status()
        if not status.running:
            raise ToolArgumentError(
                "no Herald gateway is running for this home, so there is nothing to deliver "
                "through; start one with `herald gateway run` and try again"
            )
        if platform not in status.platforms:
            known = ", ".join(status.platforms) or "none"
            raise ToolArgumentError(
                f"the running gateway does not serve {platform!r} (it serves: {known})"
            )
        # The gateway's courier (it also delivers scheduled jobs' results) sends what is
        # queued in the outbox through the delivery ledger on its next tick.
        from herald.cron import CronStore

        with CronStore.for_home(self.settings.home) as outbox:
            item = outbox.queue("mcp:send_message", None, f"{platform}:{chat_id}", "message", text)
        every = self.settings.config.cron.tick_seconds
        return json.dumps(
            {
                "queued": True,
                "id": item.id,
                "target": f"{platform}:{chat_id}",
                "note": f"the running gateway (pid {status.pid}) sends it within about "
                f"{every:g} s and records the delivery in its ledger",
            }
        )
