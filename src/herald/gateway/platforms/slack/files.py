"""Files from allowed Slack users, saved into the gateway's workdir.

Slack serves `url_private_download` only with the bot token (files:read scope);
files over the size limit (Slack states the size up front) and failed downloads are
described to the model but not saved. The saved files go on the event too, so photos
reach the model as images and audio clips are transcribed (herald.gateway.media).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from herald.gateway.contracts import InboundFile
from herald.gateway.media import describe, receive_file

log = logging.getLogger(__name__)


async def save_files(
    files: list[dict[str, Any]], folder: Path, max_bytes: int, bot_token: str
) -> tuple[tuple[str, ...], tuple[InboundFile, ...]]:
    import aiohttp

    notes, saved_files = [], []
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
            # Slack's audio clips (recorded in the app) are voice notes; an uploaded
            # music file is audio too and is transcribed the same way.
            voice = item.get("subtype") == "slack_audio"
            saved = receive_file(folder, name, data, item.get("mimetype"), voice=voice)
            saved_files.append(saved)
            notes.append(describe(saved))
    return tuple(notes), tuple(saved_files)


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
