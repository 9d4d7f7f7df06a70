"""One cheap request to check that an endpoint answers and accepts the key
(for ``herald doctor``): ``GET {base}/models``. Never prints the key."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from herald.providers.error_mapping import parse_error_body
from herald.providers.selection import Endpoint

ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    detail: str


def models_url(endpoint: Endpoint) -> str:
    base = (endpoint.base_url or "").rstrip("/")
    if endpoint.api_mode == "anthropic_messages" and not base.endswith("/v1"):
        return f"{base}/v1/models"
    return f"{base}/models"


def auth_headers(endpoint: Endpoint, api_key: str | None) -> dict[str, str]:
    if endpoint.api_mode == "anthropic_messages":
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _probe_local(endpoint: Endpoint) -> ProbeResult:
    if endpoint.local_path:
        path = Path(endpoint.local_path).expanduser()
        if not path.is_file():
            return ProbeResult(False, f"local model file not found: {path}")
        return ProbeResult(True, f"local model {endpoint.model} ({path.name})")
    return ProbeResult(True, f"local model {endpoint.model} (runs in-process; no network check)")


def _model_ids(payload: object) -> list[str]:
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        data = payload.get("models") if isinstance(payload, dict) else None  # Ollama /api/tags
    ids = []
    for item in data or []:
        if isinstance(item, dict):
            name = item.get("id") or item.get("name")
            if isinstance(name, str):
                ids.append(name)
    return ids


def probe_endpoint(endpoint: Endpoint, api_key: str | None, *, timeout: float = 10) -> ProbeResult:
    if endpoint.api_mode == "local":
        return _probe_local(endpoint)
    if not endpoint.base_url:
        return ProbeResult(False, f"{endpoint.provider}: no base URL configured")
    if endpoint.key_required and not api_key:
        return ProbeResult(False, f"{endpoint.key_env} is not set")
    import httpx

    url = models_url(endpoint)
    try:
        response = httpx.get(
            url, headers=auth_headers(endpoint, api_key), timeout=timeout, follow_redirects=True
        )
    except httpx.TimeoutException:
        return ProbeResult(False, f"{url}: no answer within {timeout:g}s")
    except httpx.HTTPError as exc:
        return ProbeResult(False, f"{url}: cannot connect ({type(exc).__name__}: {exc})")
    if response.status_code >= 400:
        _, _, message = parse_error_body(response.text)
        reason = message or response.reason_phrase or "error"
        return ProbeResult(False, f"{url}: HTTP {response.status_code}: {reason[:200]}")
    try:
        ids = _model_ids(response.json())
    except (ValueError, json.JSONDecodeError):
        return ProbeResult(
            True, f"{url}: reachable (HTTP {response.status_code}, not a model list)"
        )
    if endpoint.model in ids:
        return ProbeResult(True, f"{url}: OK, {len(ids)} models, {endpoint.model} available")
    if ids:
        return ProbeResult(
            True, f"{url}: OK, {len(ids)} models, but {endpoint.model} is not listed"
        )
    return ProbeResult(True, f"{url}: OK")
