"""The WhatsApp webhook endpoint (FastAPI), one path for both of Meta's requests.

- ``GET <path>?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…``: Meta checking
  the Callback URL once, at setup. The token is compared in constant time; the answer
  is the challenge as plain text, or 403.
- ``POST <path>``: a delivery, signed ``X-Hub-Signature-256: sha256=<hex>`` (HMAC-SHA256
  of the raw body with the app secret). Order of checks, each refusing before anything
  is parsed: body size (413), signature present (401), signature right (403), JSON
  (400). Then the adapter takes it and the answer is 200 (Meta retries anything else
  for days, so a delivery the adapter already has is answered 200 as well).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from herald.gateway.served.server import secret_equals
from herald.safety import BodyRule, RequestGuard

SIGNATURE_HEADER = "X-Hub-Signature-256"
MAX_BODY_BYTES = 3 * 1024 * 1024  # deliveries are small; Meta's batches stay far below
MAX_JSON_DEPTH = 32


class WebhookBackend(Protocol):
    path: str
    app_secret: str
    verify_token: str

    def take_delivery(self, payload: Any) -> None: ...


def signature_for(body: bytes, app_secret: str) -> str:
    """The header value Meta sends for `body` (also what the fake signs with)."""
    return "sha256=" + hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": code}}, status_code=status)


def build_whatsapp_app(backend: WebhookBackend) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, redirect_slashes=False)
    app.add_middleware(
        RequestGuard,
        rule_for=lambda _method, _path: BodyRule(MAX_BODY_BYTES, json_depth=MAX_JSON_DEPTH),
        refuse=lambda status, code, message: _error(status, message, code),
    )

    @app.get(backend.path)
    async def verify(request: Request) -> Response:
        query = request.query_params
        if query.get("hub.mode") != "subscribe" or not secret_equals(
            query.get("hub.verify_token"), backend.verify_token
        ):
            return PlainTextResponse("verification refused", status_code=403)
        return PlainTextResponse(query.get("hub.challenge") or "")

    @app.post(backend.path)
    async def deliver(request: Request) -> Response:
        body = await request.body()
        given = request.headers.get(SIGNATURE_HEADER)
        if not given:
            return _error(401, f"the {SIGNATURE_HEADER} header is missing", "missing_signature")
        if not secret_equals(given.strip(), signature_for(body, backend.app_secret)):
            return _error(403, "the signature does not match the body", "invalid_signature")
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return _error(400, "the body must be JSON", "invalid_json")
        backend.take_delivery(payload)
        return JSONResponse({"status": "ok"})

    return app


__all__ = ["SIGNATURE_HEADER", "build_whatsapp_app", "signature_for"]
