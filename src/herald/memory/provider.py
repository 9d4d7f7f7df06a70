"""The `MemoryProvider` contract: an external memory that Herald consults every turn.

At most one external provider runs beside the built-in MEMORY.md / USER.md
memory. `prefetch` is called with the user's message before the model sees it;
whatever it returns is appended to that message's API copy inside a
`<memory-context>` fence (never to the system prompt: DESIGN invariant 2).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class MemoryProvider(ABC):
    name: str = ""

    def initialize(self, *, home: Any, config: Any, secrets: Any = None) -> None:  # noqa: B027
        """Open files or connections. Called once before first use."""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt's volatile band at session start ('' = none)."""
        return ""

    @abstractmethod
    def prefetch(self, query: str) -> str:
        """Recalled text relevant to `query` ('' when nothing is relevant)."""

    @abstractmethod
    def sync_turn(self, user: str, assistant: str) -> None:
        """Learn from one finished exchange (may be a no-op)."""

    def tool_schemas(self) -> list[dict[str, Any]]:
        """Tools this provider offers: [{"name", "description", "parameters"}]."""
        return []

    def handle_tool_call(self, name: str, arguments: dict[str, Any]) -> str:
        raise NotImplementedError(f"{self.name} has no tool {name!r}")

    def shutdown(self) -> None:  # noqa: B027
        """Flush and close."""

    # Optional hooks, called when defined:
    #   on_turn_start(text) / on_session_end(session_id)
    #   on_pre_compress(messages) -> str   text to keep through a compression
    #   on_memory_write(target, action, content)   mirror of built-in memory writes
    #   backup_paths() -> list[Path]
