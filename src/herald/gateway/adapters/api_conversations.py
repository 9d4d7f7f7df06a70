"""Chat requests that carry no session key: OpenAI's stateless semantics.

A client that names no session (no `X-Herald-Session` header, no `user`) sends the
whole conversation every time, as the OpenAI API expects; that conversation — its own
system message and history — is what the model sees. Herald still stores it (one
session per distinct conversation, searchable like any other) without ever mixing two
clients into a shared default session.

How a request finds its session: after each turn, the conversation as the client
will send it back (system text, then every user/assistant text, ending with this
reply) is hashed and mapped to the session that produced it. The next request's
history (everything before its new user message) hashes to the same value exactly
when it continues that conversation unchanged, and then only its new message is
added to the session. Any other history — a first request, an edited or regenerated
answer, a conversation held with another model — starts a new session seeded with
that history, so the model sees precisely what the client sent.

The map lives in state.db (`gateway_sessions`, under keys ``api-conversation:<hash>``),
so it survives restarts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.state import StateStore

KEY_PREFIX = "api-conversation:"
TITLE_CHARS = 80

Turn = tuple[str, str]  # (role, text), role "user" or "assistant"


@dataclass(frozen=True)
class Conversation:
    system: str | None
    history: tuple[Turn, ...]  # before the new user message
    text: str  # the new user message

    def key(self) -> str:
        return state_key(self.system, self.history)

    def key_after(self, reply: str) -> str:
        return state_key(self.system, (*self.history, ("user", self.text), ("assistant", reply)))


def state_key(system: str | None, turns: tuple[Turn, ...]) -> str:
    canonical = json.dumps(
        [(system or "").strip(), [(role, text.strip()) for role, text in turns]],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return KEY_PREFIX + hashlib.sha256(canonical.encode()).hexdigest()[:32]


def session_for(store: StateStore, conversation: Conversation, *, profile: str) -> str:
    """The stored session that continues this conversation, or a new one holding its
    history (a new conversation, or a branch of an old one)."""
    from herald.state.gateway_tables import GatewayState

    if conversation.history:
        known = GatewayState(store).session_for(conversation.key())
        if known is not None and store.get_session(known) is not None:
            return known
    opening = next((text for role, text in conversation.history if role == "user"), None)
    title = " ".join((opening or conversation.text).split())[:TITLE_CHARS] or None
    session_id = store.create_session(profile=profile, source="api", title=title)
    # One transaction for the whole history, not one commit (and fsync) per message.
    store.append_messages(
        session_id, [{"role": role, "content": text} for role, text in conversation.history]
    )
    return session_id


def remember(
    store: StateStore, conversation: Conversation, session_id: str, reply: str, *, profile: str
) -> None:
    """Map the conversation as it now stands to its session, for the client's next turn."""
    from herald.state.gateway_tables import GatewayState

    GatewayState(store).bind_session(conversation.key_after(reply), profile, session_id)
