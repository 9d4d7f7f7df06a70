"""Chat requests that carry no session key: OpenAI's stateless semantics.

A client that names no session (no `X-Herald-Session` header, no `user`) sends the
whole conversation every time, as the OpenAI API expects; that conversation — its own
system message and history — is what the model sees. Herald still stores it (one
session per distinct conversation, searchable like any other) without ever mixing two
clients into a shared default session.

How a request finds its session: after each turn, the conversation as the client
will send it back (system text, then every user/assistant text, ending with this
reply) is hashed and mapped to the session that produced it. A request whose history
(everything before its new user message) hashes to a mapped value joins that session
only when the session belongs to the caller's identity and its active history still
equals the request's history exactly; then only its new message is added. Anything
else — a first request, an edited or regenerated answer, another client whose
conversation began the same way, another identity — starts a new session seeded with
the request's history, so the model sees precisely what the client sent and nothing
an earlier branch or another caller said.

The map lives in state.db (`gateway_sessions`, under keys ``api-conversation:<hash>``),
so it survives restarts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from herald.config.schema_identities import OWNER
from herald.state.gateway_tables import GatewayState

if TYPE_CHECKING:
    from herald.state import StateStore

KEY_PREFIX = "api-conversation:"
DEFAULT_PROFILE = "default"  # the profile whose store the adapter reads (see ApiAdapter.store)
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


def session_for(
    store: StateStore, conversation: Conversation, *, profile: str, identity: str = OWNER
) -> str:
    """The stored session that continues this conversation, or a new one holding its
    history (a new conversation, or a branch of an old one).

    The hash only finds a candidate: the candidate is joined only when it is an API
    session of the same identity whose active history is the request's history exactly
    (same messages, same order, same count). A session that has grown since the hash was
    recorded (another client with the same opening went on in it, or this client
    regenerated or edited an answer) would put messages the client never sent into the
    model's context, so the request forks a session of its own instead."""
    if conversation.history:
        known = GatewayState(store).session_for(conversation.key())
        record = store.get_session(known) if known is not None else None
        if (
            record is not None
            and record.source == "api"
            and record.identity == identity
            and active_turns(store, record.id) == _canonical(conversation.history)
        ):
            return record.id
    opening = next((text for role, text in conversation.history if role == "user"), None)
    title = " ".join((opening or conversation.text).split())[:TITLE_CHARS] or None
    session_id = store.create_session(profile=profile, source="api", title=title, identity=identity)
    # One transaction for the whole history, not one commit (and fsync) per message.
    store.append_messages(
        session_id, [{"role": role, "content": text} for role, text in conversation.history]
    )
    return session_id


def active_turns(store: StateStore, session_id: str) -> tuple[Turn, ...]:
    """The session's active history as a client would replay it: user and assistant
    text in order (tool rounds and text-less tool-calling turns carry nothing a client
    sends back; a compression summary or anything else is kept, so it never matches)."""
    turns: list[Turn] = []
    for message in store.get_messages(session_id):
        if message.role in ("tool",):
            continue
        text = message.content or ""
        if message.role == "assistant" and message.tool_calls and not text.strip():
            continue
        turns.append((message.role, text.strip()))
    return tuple(turns)


def _canonical(turns: tuple[Turn, ...]) -> tuple[Turn, ...]:
    return tuple((role, text.strip()) for role, text in turns)


def remember(
    store: StateStore, conversation: Conversation, session_id: str, reply: str, *, profile: str
) -> None:
    """Map the conversation as it now stands to its session, for the client's next turn."""
    GatewayState(store).bind_session(conversation.key_after(reply), profile, session_id)
