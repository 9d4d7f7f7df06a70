"""What the engine needs from the layers around it, as protocols.

The state store lives above the engine (L5), so the engine names only the
methods it calls; `herald.state.StateStore` satisfies this structurally and
surfaces pass it in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from herald.providers.message import Message


class StoredMessageLike(Protocol):
    id: int
    role: str
    content: str | None
    provenance: str  # owner | trusted | untrusted:<source>

    def to_api(self) -> dict[str, Any]: ...

    def to_message(self) -> Message: ...


class SessionLike(Protocol):
    id: str
    model: str | None
    provider: str | None
    system_prompt_hash: str | None
    title: str | None


class TranscriptStore(Protocol):
    def create_session(
        self,
        *,
        profile: str = "default",
        source: str = "cli",
        model: str | None = None,
        provider: str | None = None,
        parent_id: str | None = None,
        title: str | None = None,
    ) -> str: ...

    def get_session(self, session_id: str) -> SessionLike | None: ...

    def update_session(self, session_id: str, **fields: Any) -> None: ...

    def add_session_usage(self, session_id: str, **counters: Any) -> None: ...

    def append_message(
        self, session_id: str, message: dict[str, Any], *, api_content: str | None = None
    ) -> StoredMessageLike: ...

    def append_messages(
        self, session_id: str, messages: list[dict[str, Any]]
    ) -> Sequence[StoredMessageLike]: ...

    def get_messages(
        self, session_id: str, *, include_inactive: bool = False
    ) -> Sequence[StoredMessageLike]: ...

    def archive_and_compact(
        self, session_id: str, replace_ids: Sequence[int], new_messages: list[dict[str, Any]]
    ) -> Sequence[StoredMessageLike]: ...

    def put_system_prompt(self, text: str) -> str: ...

    def get_system_prompt(self, prompt_hash: str) -> str | None: ...

    def record_usage(self, session_id: str, **fields: Any) -> None: ...

    # Spend caps (herald.engine.spend): called only when a `budget` cap is configured.
    def spent_since(
        self,
        since: float | None = None,
        *,
        session_id: str | None = None,
        source: str | None = None,
    ) -> Any: ...

    def claim_spend_warning(self, cap: str, period: str, threshold: float) -> bool: ...
