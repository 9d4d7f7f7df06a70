"""The HTTP API entrance: an OpenAI-compatible server (FastAPI + uvicorn, in-process on
the gateway's event loop) with bearer-token auth and Herald's session endpoints.

Config ``gateway.platforms.api``: ``host`` (127.0.0.1), ``port`` (0 = any free port;
`ApiAdapter.port` is the bound one), ``api_key`` (required — the server never runs
unauthenticated nor behind a guessable key; ``herald secrets new HERALD_API_KEY --for
api`` writes one to ``.env`` and ``${HERALD_API_KEY}`` here) and
``model_name`` (the id ``/v1/models`` lists).

Routes: ``POST /v1/chat/completions`` (streaming and not), ``GET /v1/models``,
``GET /v1/sessions``, ``GET /v1/sessions/{id}``, ``POST /v1/sessions/{id}/messages``,
``GET /openapi.json``. See `api_chat` for how a chat request maps onto a session.

The API does not push (`push_replies = False`): each request awaits
`EventSink.dispatch` and answers from its `DispatchResult`. Requests for the same
session run one at a time in arrival order (a client never gets "busy" from its own
overlapping requests); a turn keeps running if its client disconnects, so the reply
still lands in the session's history.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.config import ENTRANCE_SECRETS
from herald.gateway.adapters.api_locks import KeyedLocks
from herald.gateway.adapters.api_server import (
    AdapterConfigError,
    platform_section,
    refuse_weak_secret,
    require_served_secret,
    resolve_secret,
)
from herald.gateway.adapters.http_base import HttpResponseAdapter
from herald.gateway.adapters.served import ServedAdapter
from herald.gateway.contracts import (
    DispatchResult,
    EventSink,
    MessageEvent,
    StreamCallbacks,
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
        api_key: str,
        host: str = "127.0.0.1",
        port: int = 8642,
        model_name: str = "herald",
        home: HeraldHome | None = None,
        store: StateStore | None = None,
        secret_values: tuple[str, ...] = (),
    ) -> None:
        if not api_key:
            raise AdapterConfigError("the API adapter needs an api_key")
        refuse_weak_secret(ENTRANCE_SECRETS["api"], api_key)
        self.api_key = api_key
        self.host = host
        self.requested_port = port
        self.model_name = model_name
        self._home = home
        self._store = store
        self._own_store = False
        self._extra = tuple(dict.fromkeys((*secret_values, api_key)))
        self._locks = KeyedLocks()
        self._turns: set[asyncio.Task[DispatchResult]] = set()

    # ---- lifecycle ------------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        from herald.gateway.adapters.api_app import build_api_app

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
    ) -> asyncio.Future[DispatchResult]:
        event = MessageEvent(
            platform=self.name,
            chat_id=key,
            user_id=key,
            text=text,
            message_id=message_id,
            session_hint=key,
            raw={"caller_system": caller_system},
        )
        return self._start(f"key:{key}", event, on_delta)

    def start_session_turn(
        self,
        session_id: str,
        text: str,
        *,
        message_id: str,
        caller_system: str | None = None,
        on_delta: Callable[[str], None] | None = None,
    ) -> asyncio.Future[DispatchResult]:
        key = f"session:{session_id}"
        event = MessageEvent(
            platform=self.name,
            chat_id=key,
            user_id=key,
            text=text,
            message_id=message_id,
            session_hint=key,
            raw={"caller_system": caller_system},
        )
        return self._start(key, event, on_delta, stored_session=session_id)

    def _start(
        self,
        lock_key: str,
        event: MessageEvent,
        on_delta: Callable[[str], None] | None,
        *,
        stored_session: str | None = None,
    ) -> asyncio.Future[DispatchResult]:
        """Dispatch as a task of its own: a client hanging up cancels its request, never
        the turn."""
        if self._sink is None:
            raise RuntimeError("the API adapter is not connected to a runner")
        sink = self._sink
        stream = StreamCallbacks(on_text_delta=on_delta) if on_delta is not None else None

        async def run() -> DispatchResult:
            async with self._locks.hold(lock_key):
                try:
                    if stored_session is not None:
                        bind_stored_session(sink, event, stored_session)
                    return await sink.dispatch(event, self, stream=stream)
                except Exception as exc:  # the runner failed; the client gets a 500
                    log.exception("dispatch of an API request failed")
                    return DispatchResult(
                        status="error",
                        text=f"the gateway failed to run the turn ({type(exc).__name__})",
                        exit_reason="gateway_error",
                    )

        task = asyncio.create_task(run(), name=f"api-turn:{lock_key}")
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)
        return task


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
    The key must pass Herald's entrance-secret rule (`herald.config.require_entrance`),
    or `WeakSecretError` says why and how to make one. Keyword arguments the lifecycle
    may pass: ``settings`` (for the reuse check against the other entrances), ``home``
    (the gateway profile's `HeraldHome`) or ``store`` (its `StateStore`), read by the
    /v1/sessions endpoints; others are ignored."""
    settings = platform_section(config, "api")
    api_key = resolve_secret(settings.api_key, secrets, setting="gateway.platforms.api.api_key")
    if not api_key:
        raise AdapterConfigError(
            "gateway.platforms.api.api_key is not set, and the API never serves without "
            "authentication: set `api_key: ${HERALD_API_KEY}` under gateway.platforms.api "
            "and make the key with: herald secrets new HERALD_API_KEY --for api"
        )
    # A guessable key is remote code execution for whoever reaches the port: refuse it.
    api_key = require_served_secret(API_KEY_SECRET, config, secrets, "api", kw)
    home = kw.get("home")
    if home is None and kw.get("store") is None and secrets.env_file is not None:
        from herald.config import HeraldHome

        home = HeraldHome(secrets.env_file.parent)
    return ApiAdapter(
        api_key=api_key,
        host=settings.host,
        port=settings.port,
        model_name=settings.model_name,
        home=home,
        store=kw.get("store"),
        secret_values=tuple(secrets.secret_values()),
    )
