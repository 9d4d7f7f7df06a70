"""The webhook entrance: signed JSON deliveries start turns in a narrow, read-only
profile; replies go to a configured chat or back in the HTTP response.

Config ``gateway.platforms.webhook``: ``secret`` (required, HMAC-SHA256 key, e.g.
``${HERALD_WEBHOOK_SECRET}``; see `signing` for the header format and replay
window), ``profile`` (the profile that handles webhooks), ``host``/``port`` (its own
server, 127.0.0.1:8643 by default) and ``deliver_to`` (``platform:chat``, e.g.
``telegram:12345``).

A delivery to ``POST /webhook/{name}`` (or ``/webhook``, name ``default``) becomes a
`MessageEvent` with ``platform="webhook"``, ``chat_id=name`` (one session per webhook
name; deliveries to one name run one at a time) and the text fenced off as untrusted
content, after `herald.safety.scan_text(kind="webhook")` let it through. The runner
runs it with the ``herald-webhook`` toolset (its toolset for platform ``webhook``) in
the ``profile`` set here (the platform's default below any `profile_routes`).

Replies: without ``deliver_to`` the response is ``200 {"status": "replied", "reply":
…}``; with it, the response is ``202 {"status": "accepted", "delivery_id": …}`` at once
and the reply (or the failure) is sent with the runner's ``deliver_text`` (split,
redacted and recorded in the delivery ledger under ``webhook:<delivery id>``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fastapi.responses import JSONResponse

from herald.config import ENTRANCE_SECRETS
from herald.gateway.contracts import (
    DispatchResult,
    EventSink,
    MessageEvent,
    SendResult,
)
from herald.gateway.platforms.webhook.app import build_webhook_app, frame_untrusted
from herald.gateway.served.locks import KeyedLocks
from herald.gateway.served.response import HttpResponseAdapter
from herald.gateway.served.server import (
    AdapterConfigError,
    EmbeddedServer,
    platform_section,
    refuse_weak_secret,
    require_served_secret,
    resolve_secret,
)

if TYPE_CHECKING:
    from herald.config import HeraldConfig, Secrets
    from herald.config.schema_gateway import WebhookPlatformConfig

log = logging.getLogger(__name__)

__all__ = ["Deliver", "WebhookAdapter", "create_adapter", "parse_target"]

# `GatewayRunner.deliver_text`: (platform, chat_id, text, *, thread_id, key) -> landed?
Deliver = Callable[..., Awaitable[Any]]
_KEEP_DELIVERIES = 256


class WebhookAdapter(HttpResponseAdapter):
    name = "webhook"
    push_refusal = "webhooks answer in the HTTP response or through deliver_to; they cannot push"

    def __init__(
        self,
        *,
        secret: str,
        host: str = "127.0.0.1",
        port: int = 8643,
        profile: str | None = None,
        deliver_to: str | None = None,
        deliver: Deliver | None = None,
        secret_values: tuple[str, ...] = (),
    ) -> None:
        if not secret:
            raise AdapterConfigError("the webhook adapter needs a secret")
        refuse_weak_secret(ENTRANCE_SECRETS["webhook"], secret)
        self.target = parse_target(deliver_to) if deliver_to is not None else None
        self.secret = secret
        self.host = host
        self.requested_port = port
        self.profile = profile
        self.deliver_to = deliver_to
        self._deliver = deliver
        self._extra = tuple(dict.fromkeys((*secret_values, secret)))
        self._sink: EventSink | None = None
        self._server: EmbeddedServer | None = None
        self._locks = KeyedLocks()
        self._tasks: set[asyncio.Task[Any]] = set()
        # delivery id -> pending | delivered | failed: <why> (the latest few, for diagnostics)
        self.deliveries: OrderedDict[str, str] = OrderedDict()

    # ---- lifecycle ------------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        if self.deliver_to is not None and self._deliver is None:
            self._deliver = getattr(sink, "deliver_text", None)
            if self._deliver is None:
                raise AdapterConfigError(
                    "gateway.platforms.webhook.deliver_to is set, but the gateway offers no "
                    "deliver_text() to send replies with"
                )
        self._sink = sink
        server = EmbeddedServer(
            build_webhook_app(self), host=self.host, port=self.requested_port, name="webhook"
        )
        await server.start()
        self._server = server

    async def disconnect(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10)

    # ---- capabilities ---------------------------------------------------------------------

    # ---- what the app uses ----------------------------------------------------------------

    def build_event(self, name: str, content: str, delivery_id: str) -> MessageEvent:
        return MessageEvent(
            platform=self.name,
            chat_id=name,
            user_id=f"webhook:{name}",
            text=frame_untrusted(name, delivery_id, content),
            message_id=delivery_id,
            raw={"webhook": name, "delivery_id": delivery_id},
        )

    async def handle(self, event: MessageEvent, delivery_id: str) -> JSONResponse:
        self._note(delivery_id, "pending")
        if self.deliver_to is not None:
            self._spawn(self._run_and_deliver(event, delivery_id))
            body = {"status": "accepted", "delivery_id": delivery_id, "deliver_to": self.deliver_to}
            return JSONResponse(body, status_code=202)
        task = self._spawn(self._dispatch(event))
        result = await asyncio.shield(task)
        text = self.redact(result.text or "")
        if result.status in ("replied", "command"):
            self._note(delivery_id, "delivered")
            return JSONResponse(
                {
                    "status": "replied",
                    "delivery_id": delivery_id,
                    "reply": text,
                    "session_id": result.session_id,
                    "exit_reason": result.exit_reason,
                }
            )
        self._note(delivery_id, f"failed: {result.status}")
        busy = result.status in ("queued", "steered", "interrupted")
        status, code = (409, "session_busy") if busy else (500, result.exit_reason or "turn_failed")
        message = text or ("the webhook's session is busy" if busy else "the turn failed")
        return JSONResponse(
            {"error": {"message": message, "type": code}, "delivery_id": delivery_id},
            status_code=status,
        )

    # ---- running turns --------------------------------------------------------------------

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _dispatch(self, event: MessageEvent) -> DispatchResult:
        if self._sink is None:
            raise RuntimeError("the webhook adapter is not connected to a runner")
        async with self._locks.hold(event.chat_id):
            try:
                return await self._sink.dispatch(event, self)
            except Exception as exc:
                log.exception("dispatch of a webhook delivery failed")
                return DispatchResult(
                    status="error",
                    text=f"the gateway failed to run the turn ({type(exc).__name__})",
                    exit_reason="gateway_error",
                )

    async def _run_and_deliver(self, event: MessageEvent, delivery_id: str) -> None:
        result = await self._dispatch(event)
        name = event.chat_id
        if result.status in ("replied", "command"):
            text = result.text
        else:
            why = result.text or result.status
            text = f'Webhook "{name}" (delivery {delivery_id}) could not be handled: {why}'
        assert self._deliver is not None and self.target is not None
        platform, chat_id, thread_id = self.target
        try:
            landed = await self._deliver(
                platform,
                chat_id,
                self.redact(text),
                thread_id=thread_id,
                key=f"webhook:{delivery_id}",
            )
        except Exception as exc:
            log.exception("delivering webhook %s to %s failed", delivery_id, self.deliver_to)
            self._note(delivery_id, f"failed: {type(exc).__name__}: {exc}")
            return
        if landed is False or (isinstance(landed, SendResult) and not landed.ok):
            log.warning("delivering webhook %s to %s failed", delivery_id, self.deliver_to)
            self._note(delivery_id, "failed: the target did not take the message")
        else:
            self._note(delivery_id, "delivered")

    def _note(self, delivery_id: str, state: str) -> None:
        self.deliveries[delivery_id] = state
        self.deliveries.move_to_end(delivery_id)
        while len(self.deliveries) > _KEEP_DELIVERIES:
            self.deliveries.popitem(last=False)


def parse_target(value: str) -> tuple[str, str, str | None]:
    """``platform:chat`` or ``platform:chat:thread`` → (platform, chat, thread)."""
    platform, _, rest = value.strip().partition(":")
    chat, _, thread = rest.partition(":")
    if not platform or not chat:
        raise AdapterConfigError(
            "gateway.platforms.webhook.deliver_to must be platform:chat[:thread] "
            f"(e.g. telegram:12345), got {value!r}"
        )
    return platform, chat, thread or None


def create_adapter(
    config: HeraldConfig | WebhookPlatformConfig, secrets: Secrets, **kw: Any
) -> WebhookAdapter:
    """The webhook adapter for ``gateway.platforms.webhook`` (the whole config or that
    section); its secret must pass Herald's entrance-secret rule (`WeakSecretError`
    otherwise). ``settings`` (for the reuse check) and ``deliver=`` (async, like
    `GatewayRunner.deliver_text`) may be passed; otherwise the runner's ``deliver_text`` is used when ``deliver_to`` is set. Other
    keyword arguments are ignored."""
    settings = platform_section(config, "webhook")
    secret = resolve_secret(settings.secret, secrets, setting="gateway.platforms.webhook.secret")
    if not secret:
        raise AdapterConfigError(
            "gateway.platforms.webhook.secret is not set, and unsigned webhooks are never "
            "accepted: set `secret: ${HERALD_WEBHOOK_SECRET}` under gateway.platforms.webhook "
            "and make the secret with: herald secrets new HERALD_WEBHOOK_SECRET --for webhook"
        )
    # Whoever can sign can run a turn: a guessable HMAC key is as bad as none.
    secret = require_served_secret(ENTRANCE_SECRETS["webhook"], config, secrets, "webhook", kw)
    return WebhookAdapter(
        secret=secret,
        host=settings.host,
        port=settings.port,
        profile=settings.profile,
        deliver_to=settings.deliver_to,
        deliver=kw.get("deliver"),
        secret_values=tuple(secrets.secret_values()),
    )
