"""Attachments from allowed Discord users, saved into the gateway's workdir.

Only files within the size limit are fetched (Discord states the size up front);
larger ones, and any that fail to download, are described to the model but not
saved. The notes name where each file was saved so the model can read it; the saved
files go on the event too, so photos reach the model as images and voice messages are
transcribed (herald.gateway.media).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from herald.gateway.contracts import InboundFile
from herald.gateway.media import describe, receive_file

log = logging.getLogger(__name__)


async def save_attachments(
    attachments: Any, folder: Path, max_bytes: int
) -> tuple[tuple[str, ...], tuple[InboundFile, ...]]:
    notes, files = [], []
    for attachment in attachments:
        kind = attachment.content_type or "file"
        described = f"{attachment.filename} ({kind}, {attachment.size} bytes)"
        if attachment.size > max_bytes:
            notes.append(f"{described}, not saved: larger than {max_bytes // 1024} KiB")
            continue
        try:
            data = await attachment.read()
        except Exception as error:  # the CDN link expired, a network error
            log.warning("discord: downloading %s failed: %s", attachment.filename, error)
            notes.append(f"{described}, not saved: the download failed")
            continue
        if len(data) > max_bytes:
            notes.append(f"{described}, not saved: larger than {max_bytes // 1024} KiB")
            continue
        voice = bool(getattr(attachment, "is_voice_message", lambda: False)())
        saved = receive_file(
            folder, attachment.filename, data, attachment.content_type, voice=voice
        )
        files.append(saved)
        notes.append(describe(saved))
    return tuple(notes), tuple(files)
