"""Meta's Graph API, the part the WhatsApp Cloud API adapter speaks (httpx).

``POST /{version}/{phone_number_id}/messages`` sends (text, interactive buttons or a
list, a template, media by id); ``POST /{version}/{phone_number_id}/media`` uploads;
``GET /{version}/{media_id}`` answers a short-lived URL that ``GET`` (with the same
bearer token) turns into the bytes; ``GET /{version}/{phone_number_id}`` is the health
probe. Errors come as ``{"error": {"code": …, "message": …}}``; `GraphError` keeps the
code so the adapter can tell a closed service window (131047) from a rate limit
(130429, HTTP 429) from a number that is not on WhatsApp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

RE_ENGAGEMENT = 131047  # more than 24 h since the person's last message: templates only
RATE_LIMITED = (4, 80007, 130429, 131048, 131056)
# Codes about the recipient or the request, where sending the same again cannot help.
PERMANENT = (100, 131008, 131009, 131021, 131026, 131051, 132000, 132001)


@dataclass
class GraphError(Exception):
    status: int
    code: int | None
    message: str

    def __str__(self) -> str:
        code = f" (code {self.code})" if self.code is not None else ""
        return f"Graph API answered {self.status}{code}: {self.message}"

    @property
    def permanent(self) -> bool:
        return self.code in PERMANENT

    @property
    def rate_limited(self) -> bool:
        return self.status == 429 or self.code in RATE_LIMITED


class GraphClient:
    def __init__(self, base: str, version: str, phone_number_id: str, token: str) -> None:
        self.root = f"{base.rstrip('/')}/{version.strip('/')}"
        self.phone_number_id = phone_number_id
        self._token = token
        self._http: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(30.0, connect=10.0),
                headers={"Authorization": f"Bearer {self._token}"},
            )
        return self._http

    async def close(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()

    async def _call(self, method: str, url: str, **kw: Any) -> dict[str, Any]:
        try:
            response = await self.http.request(method, url, **kw)
        except httpx.HTTPError as exc:
            raise GraphError(0, None, f"unreachable: {type(exc).__name__} {exc}") from None
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400 or not isinstance(body, dict) or "error" in body:
            error = (body or {}).get("error") if isinstance(body, dict) else None
            error = error if isinstance(error, dict) else {}
            code = error.get("code")
            raise GraphError(
                response.status_code,
                int(code) if isinstance(code, int) else None,
                str(error.get("message") or response.reason_phrase or "unknown error"),
            )
        return body

    async def send(self, to: str, message: dict[str, Any]) -> str:
        """Send one message to `to` (digits); returns its wamid."""
        payload = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to}
        body = await self._call(
            "POST", f"{self.root}/{self.phone_number_id}/messages", json={**payload, **message}
        )
        messages = body.get("messages") or [{}]
        return str(messages[0].get("id") or "")

    async def upload(self, name: str, data: bytes, mime: str) -> str:
        body = await self._call(
            "POST",
            f"{self.root}/{self.phone_number_id}/media",
            data={"messaging_product": "whatsapp", "type": mime},
            files={"file": (name, data, mime)},
        )
        return str(body.get("id") or "")

    async def download(self, media_id: str, max_bytes: int) -> tuple[bytes | None, str]:
        """The media's bytes (None when over `max_bytes`) and why not."""
        info = await self._call("GET", f"{self.root}/{media_id}")
        size = int(info.get("file_size") or 0)
        if size > max_bytes:
            return None, f"larger than {max_bytes // 1024} KiB"
        url = str(info.get("url") or "")
        if not url.startswith(("https://", "http://")):
            return None, "the Graph API gave no download URL"
        data = bytearray()
        try:
            async with self.http.stream("GET", url) as response:
                if response.status_code != 200:
                    return None, f"the download answered {response.status_code}"
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > max_bytes:
                        return None, f"larger than {max_bytes // 1024} KiB"
        except httpx.HTTPError as exc:
            return None, f"the download failed: {type(exc).__name__}"
        return bytes(data), ""

    async def probe(self, timeout: float) -> None:
        await self._call(
            "GET",
            f"{self.root}/{self.phone_number_id}",
            params={"fields": "id,display_phone_number"},
            timeout=timeout,
        )


__all__ = ["RE_ENGAGEMENT", "GraphClient", "GraphError"]
