"""The HTTP API entrance: an OpenAI-compatible server (FastAPI + uvicorn, in-process on
the gateway's event loop) with bearer-token auth and Herald's session endpoints.

Config ``gateway.platforms.api``: ``host`` (127.0.0.1), ``port`` (0 = any free port;
`ApiAdapter.port` is the bound one), ``api_key`` (the owner's key) and/or ``keys``
(callers with an identity and scopes, see `keys`) — at least one, each strong: the
server never runs unauthenticated nor behind a guessable key; ``herald secrets new
HERALD_API_KEY --for api`` writes one to ``.env`` and ``${HERALD_API_KEY}`` here — and
``model_name`` (the id ``/v1/models`` lists). Every turn runs as the key's identity.

Routes: ``POST /v1/chat/completions`` (streaming and not), ``GET /v1/models``,
``GET /v1/sessions``, ``GET /v1/sessions/{id}``, ``POST /v1/sessions/{id}/messages``,
``GET /openapi.json``. See `chat` for how a chat request maps onto a session.

The API does not push (`push_replies = False`): each request awaits
`EventSink.dispatch` and answers from its `DispatchResult`. Requests for the same
session run one at a time in arrival order (a client never gets "busy" from its own
overlapping requests); a turn keeps running if its client disconnects, so the reply
still lands in the session's history.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import herald.gateway.platforms.api.conversations as conversations
from herald.config import ENTRANCE_SECRETS
from herald.config.schema_identities import OWNER
from herald.gateway.contracts import (
    DispatchResult,
    EventSink,
    MessageEvent,
    StreamCallbacks,
)
from herald.gateway.platforms.api.conversations import Conversation
from herald.gateway.platforms.api.keys import KeyRing, ServedKey, owner_key, served_keys
from herald.gateway.served.adapter import ServedAdapter
from herald.gateway.served.locks import KeyedLocks
from herald.gateway.served.response import HttpResponseAdapter
from herald.gateway.served.server import (
    AdapterConfigError,
    platform_section,
    refuse_weak_secret,
    require_served_secret,
)

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets
    from herald.config.schema_gateway import ApiPlatformConfig
    from herald.state import StateStore

log = logging.getLogger(__name__)

__all__ = ["AdapterConfigError", "ApiAdapter", "create_adapter"]

API_KEY_SECRET = ENTRANCE_SECRETS["api"]


class ApiAdapter(ServedAdapter, HttpResponseAdapter):
    name = "api"
    push_refusal = "the API answers in the HTTP response and cannot push messages"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        keys: Sequence[ServedKey] = (),
        host: str = "127.0.0.1",
        port: int = 8642,
        model_name: str = "herald",
        home: HeraldHome | None = None,
        store: StateStore | None = None,
        secret_values: tuple[str, ...] = (),
    ) -> None:
        served = [owner_key(api_key)] if api_key else []
        served += list(keys)
        if not served:
            raise AdapterConfigError("the API adapter needs an api_key or keys")
        for key in served:  # also for code that builds the adapter without create_adapter
            refuse_weak_secret(dataclasses.replace(API_KEY_SECRET, setting=key.setting), key.secret)
        self.keyring = KeyRing(served)
        self.host = host
        self.requested_port = port
        self.model_name = model_name
        self._home = home
        self._store = store
        self._own_store = False
        self._extra = tuple(dict.fromkeys((*secret_values, *self.keyring.secrets())))
        self._locks = KeyedLocks()
        self._turns: set[asyncio.Task[DispatchResult]] = set()

    # ---- lifecycle ------------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        from herald.gateway.platforms.api.app import build_api_app

        await self._serve(sink, build_api_app, host=self.host, port=self.requested_port)

    async def disconnect(self) -> None:
        await self._stop_serving()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # ---- capabilities ---------------------------------------------------------------------

    def markdown_flavour(self) -> str:
        return "commonmark"

    # ---- what the app uses ----------------------------------------------------------------

    def extra_secrets(self) -> tuple[str, ...]:
        return self._extra

    def _state_root(self) -> Path:
        return self._home.root if self._home is not None else _default_home_root()

    def start_chat_turn(
        self,
        key: str,
        text: str,
        *,
        caller_system: str | None,
        message_id: str,
        on_delta: Callable[[str], None] | None,
        identity: str = OWNER,
    ) -> asyncio.Future[DispatchResult]:
        event = _api_event(key, text, message_id, caller_system, identity)
        # Named sessions are per identity (see build_session_key), and so are their locks.
        return self._start(f"key:{identity}:{key}", event, on_delta)

    def start_conversation_turn(
        self,
        conversation: Conversation,
        *,
        identity: str,
        message_id: str,
        on_delta: Callable[[str], None] | None = None,
    ) -> asyncio.Future[DispatchResult]:
        """A stateless request: its session is found (or forked) while the conversation's
        lock is held, so two clients sending the same history one moment apart never both
        join the session before the first one's turn has made it longer."""
        store = self.store()

        async def resolve() -> str:
            return await asyncio.to_thread(
                conversations.session_for,
                store,
                conversation,
                profile=conversations.DEFAULT_PROFILE,
                identity=identity,
            )

        async def remember(result: DispatchResult) -> None:
            if result.status == "replied" and result.session_id:
                reply = self.redact(result.text).strip()
                await asyncio.to_thread(
                    conversations.remember,
                    store,
                    conversation,
                    result.session_id,
                    reply,
                    profile=conversations.DEFAULT_PROFILE,
                )

        event = MessageEvent(
            platform=self.name,
            chat_id=conversation.key(),
            user_id=conversation.key(),
            text=conversation.text,
            message_id=message_id,
            identity=identity,
            raw={"caller_system": conversation.system},
        )
        return self._start(
            f"conversation:{identity}:{conversation.key()}",
            event,
            on_delta,
            resolve=resolve,
            after=remember,
        )

    def start_session_turn(
        self,
        session_id: str,
        text: str,
        *,
        message_id: str,
        caller_system: str | None = None,
        on_delta: Callable[[str], None] | None = None,
        identity: str = OWNER,
    ) -> asyncio.Future[DispatchResult]:
        event = _session_event(session_id, text, message_id, caller_system, identity)
        return self._start(f"session:{session_id}", event, on_delta, stored_session=session_id)

    def _start(
        self,
        lock_key: str,
        event: MessageEvent,
        on_delta: Callable[[str], None] | None,
        *,
        stored_session: str | None = None,
        resolve: Callable[[], Awaitable[str]] | None = None,
        after: Callable[[DispatchResult], Awaitable[None]] | None = None,
    ) -> asyncio.Future[DispatchResult]:
        """Dispatch as a task of its own: a client hanging up cancels its request, never
        the turn. With `resolve`, the stored session is chosen under `lock_key` and the
        turn then also holds that session's lock; `after` runs before either is let go."""
        if self._sink is None:
            raise RuntimeError("the API adapter is not connected to a runner")
        sink = self._sink
        stream = StreamCallbacks(on_text_delta=on_delta) if on_delta is not None else None

        async def dispatch(event: MessageEvent, session_id: str | None) -> DispatchResult:
            try:
                if session_id is not None:
                    bind_stored_session(sink, event, session_id)
                result = await sink.dispatch(event, self, stream=stream)
                if after is not None:
                    await after(result)
                return result
            except Exception as exc:  # the runner failed; the client gets a 500
                log.exception("dispatch of an API request failed")
                return DispatchResult(
                    status="error",
                    text=f"the gateway failed to run the turn ({type(exc).__name__})",
                    exit_reason="gateway_error",
                )

        async def run() -> DispatchResult:
            async with self._locks.hold(lock_key):
                if resolve is None:
                    return await dispatch(event, stored_session)
                try:
                    session_id = await resolve()
                except Exception as exc:
                    log.exception("finding the session of an API conversation failed")
                    return DispatchResult(
                        status="error",
                        text=f"the gateway could not store the conversation ({type(exc).__name__})",
                        exit_reason="gateway_error",
                    )
                bound = _session_event(
                    session_id,
                    event.text,
                    event.message_id or "",
                    _caller_system(event),
                    event.identity or OWNER,
                )
                async with self._locks.hold(f"session:{session_id}"):
                    return await dispatch(bound, session_id)

        task = asyncio.create_task(run(), name=f"api-turn:{lock_key}")
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)
        return task


def _session_event(
    session_id: str, text: str, message_id: str, caller_system: str | None, identity: str
) -> MessageEvent:
    return _api_event(f"session:{session_id}", text, message_id, caller_system, identity)


def _api_event(
    key: str, text: str, message_id: str, caller_system: str | None, identity: str
) -> MessageEvent:
    """An API turn as the pipeline takes it: the key stands for chat, user and session."""
    return MessageEvent(
        platform=ApiAdapter.name,
        chat_id=key,
        user_id=key,
        text=text,
        message_id=message_id,
        session_hint=key,
        identity=identity,
        raw={"caller_system": caller_system},
    )


def _caller_system(event: MessageEvent) -> str | None:
    raw = event.raw if isinstance(event.raw, dict) else {}
    value = raw.get("caller_system")
    return value if isinstance(value, str) else None


def bind_stored_session(sink: EventSink, event: MessageEvent, session_id: str) -> None:
    """Make the runner answer `event` in the stored session `session_id`, through its
    ``bind_session(event, session_id)`` (`GatewayRunner` has it). The key
    ``session:<id>`` only ever means that one session, so binding it again is a no-op."""
    bind = getattr(sink, "bind_session", None)
    if not callable(bind):
        raise RuntimeError("this runner cannot continue a stored session (no bind_session)")
    bind(event, session_id)


def _default_home_root() -> Path:
    from herald.config import resolve_home

    return resolve_home(None).root


def create_adapter(
    config: HeraldConfig | ApiPlatformConfig, secrets: Secrets, **kw: Any
) -> ApiAdapter:
    """The API adapter for ``gateway.platforms.api`` (the whole config or that section).
    Every key must pass Herald's entrance-secret rule (`herald.config.require_entrance`),
    or `WeakSecretError` says why and how to make one. Keyword arguments the lifecycle
    may pass: ``settings`` (whose ``identities`` the keys must name, and for the reuse
    check against the other entrances), ``home`` (the gateway profile's `HeraldHome`)
    or ``store`` (its `StateStore`), read by the /v1/sessions endpoints; others are
    ignored."""
    section = platform_section(config, "api")
    settings = kw.get("settings")
    whole = settings.config if settings is not None else config
    identities = getattr(whole, "identities", None)
    keys = served_keys(section, secrets, None if identities is None else list(identities))
    if not keys:
        raise AdapterConfigError(
            "gateway.platforms.api.api_key is not set, and the API never serves without "
            "authentication: set `api_key: ${HERALD_API_KEY}` under gateway.platforms.api "
            "and make the key with: herald secrets new HERALD_API_KEY --for api (or list "
            "callers under gateway.platforms.api.keys)"
        )
    # A guessable key is remote code execution for whoever reaches the port: refuse it.
    # The owner's key also must not be another entrance's secret (the reuse check).
    if section.api_key:
        require_served_secret(API_KEY_SECRET, config, secrets, "api", kw)
    for key in keys:
        refuse_weak_secret(dataclasses.replace(API_KEY_SECRET, setting=key.setting), key.secret)
    home = kw.get("home")
    if home is None and kw.get("store") is None and secrets.env_file is not None:
        from herald.config import HeraldHome

        home = HeraldHome(secrets.env_file.parent)
    return ApiAdapter(
        keys=keys,
        host=section.host,
        port=section.port,
        model_name=section.model_name,
        home=home,
        store=kw.get("store"),
        secret_values=tuple(secrets.secret_values()),
    )
