"""Files from allowed Slack users, saved into the gateway's workdir.

Slack serves `url_private_download` only with the bot token (files:read scope);
files over the size limit (Slack states the size up front) and failed downloads are
described to the model but not saved.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from herald.gateway.inbox import save_inbound_file

log = logging.getLogger(__name__)


async def save_files(
    files: list[dict[str, Any]], folder: Path, max_bytes: int, bot_token: str
) -> tuple[str, ...]:
    import aiohttp

    notes = []
    async with aiohttp.ClientSession() as session:
        for item in files:
            name = str(item.get("name") or "file")
            described = f"{name} ({item.get('mimetype', 'file')}, {item.get('size', 0)} bytes)"
            url = item.get("url_private_download") or item.get("url_private")
            if int(item.get("size") or 0) > max_bytes:
                notes.append(f"{described}, not saved: larger than {max_bytes // 1024} KiB")
                continue
            data = await _download(session, str(url or ""), bot_token, max_bytes)
            if data is None:
                notes.append(f"{described}, not saved: the download failed")
                continue
            path = save_inbound_file(folder, name, data)
            notes.append(f"{described}, saved as {path}")
    return tuple(notes)


async def _download(session: Any, url: str, token: str, max_bytes: int) -> bytes | None:
    if not url.startswith(("https://", "http://")):
        return None
    try:
        async with session.get(url, headers={"Authorization": f"Bearer {token}"}) as response:
            if response.status != 200 or response.content_type == "text/html":
                return None  # Slack answers a refused download with its sign-in page
            data = b""
            async for chunk in response.content.iter_chunked(65536):
                data += chunk
                if len(data) > max_bytes:
                    return None
    except Exception as error:
        log.warning("slack: downloading a file failed: %s", error)
        return None
    return data if len(data) <= max_bytes else None
