"""What tools may use from the layers above them, named as protocols.

`ToolContext.store` is the session store (`herald.state.StateStore`, L5), seen
here only through the read methods the history tools call, so the L2 → L5
dependency is explicit and structural. `MemoryHandle` is the agent's memory
manager as the `memory` tool and provider tools see it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class HistoryStore(Protocol):
    """The read side of state.db that `session_search` uses."""

    def resolve_session_id(self, prefix: str) -> str: ...

    def search_messages(self, query: str, **options: Any) -> list[Any]: ...

    def search_messages_relaxed(self, query: str, **options: Any) -> list[Any]: ...

    def get_message(self, message_id: int) -> Any: ...

    def get_message_window(
        self, sid: str, around_id: int, *, before: int = 5, after: int = 5
    ) -> list[Any]: ...

    def get_session_slice(self, sid: str, *, head: int = 20, tail: int = 20) -> Any: ...

    def session_lineages(self, sids: Sequence[str]) -> dict[str, Any]: ...

    def summarize_sessions(self, sids: Sequence[str]) -> list[Any]: ...


class ChangeGuard(Protocol):
    """The checkpoint step before a change (`herald.checkpoints.TurnCheckpoints` is
    the one there is; the engine hands each turn its own). Returns a notice for the
    model and the user (why there is no checkpoint), at most once per session."""

    def before_change(self, tool: str, command: str | None = None) -> str | None: ...

    def covers(self, paths: Iterable[str]) -> bool:
        """Whether the newest checkpoint holds `paths` and all below them (for the sandbox
        policy: a destructive command on paths no checkpoint covers is not relaxed)."""
        ...


class NestedTools(Protocol):
    """This turn's tools as a tool calling others on the model's behalf sees them
    (execute_code's script; the engine's `NestedToolCalls` is the one there is). A call
    takes the same path as one in the model's own message: the offered-tools check, the
    plugins' and the registry's hooks, the checkpoint step and the tool's own gates."""

    def names(self) -> tuple[str, ...]: ...

    def definition(self, name: str) -> dict[str, Any] | None: ...

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run one call; returns a `herald.tools.ToolResult` (never raises)."""
        ...


class ChatFiles(Protocol):
    """The chat a gateway session serves, as the `send_file` tool reaches it (the
    gateway's `herald.gateway.files_out.ChatFileSender` is the one there is). The
    destination is fixed when the session's agent is built: a tool call never names it."""

    @property
    def platform(self) -> str: ...

    @property
    def shared(self) -> bool:
        """Other people see this chat (a group or channel): the owner must approve."""
        ...

    @property
    def max_bytes(self) -> int: ...

    def unsupported(self) -> str | None:
        """Why this platform cannot send files, or None when it can."""
        ...

    def send(self, name: str, data: bytes, caption: str) -> str:
        """Upload one file to the chat (blocking, from the tool thread); returns a line
        for the model. Raises RuntimeError with the platform's reason when it failed."""
        ...


class MemoryHandle(Protocol):
    """The agent's memory manager, as tools reach it."""

    def handle_tool_call(self, name: str, arguments: dict[str, Any]) -> Any: ...


@dataclass(frozen=True)
class RequestSnapshot:
    """The request a turn sent last, as a tool of that turn sees it (a copy): the system
    prompt bytes, the history after it (the assistant message whose tool calls are
    running included), and the tools array. Fork-mode sub-agents start from it."""

    system_prompt: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]


__all__ = ["ChangeGuard", "HistoryStore", "MemoryHandle", "NestedTools", "RequestSnapshot"]
