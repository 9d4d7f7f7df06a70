"""Files in and out of Matrix rooms.

In: a file from an allowed user is downloaded from the media repository (and
decrypted, when it came as an encrypted attachment: the key is in the event, the
homeserver only ever had ciphertext) and saved under the workdir's ``attachments/``
through the gateway's one inbound writer (`herald.gateway.media.receive_file`), and
goes on the event, so a photo (``m.image``) becomes an image input and a voice message
(``m.audio``, marked ``org.matrix.msc3245.voice``) a transcript; anyone else's file,
or one over the size limit, is described to the model and not saved.

A spoken reply (`OutgoingFile.voice`) goes out as ``m.audio`` with the voice mark.

Out: in an encrypted room the bytes are encrypted before upload (AES-CTR, key and hash
in the event, which is itself Megolm-encrypted); elsewhere they are uploaded as they
are. The caption is the event's body and the file name its ``filename``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from herald.gateway.contracts import InboundFile, OutgoingFile
from herald.gateway.media import describe, receive_file
from herald.gateway.platforms.matrix.events import VOICE_FLAG, Media

log = logging.getLogger(__name__)


async def save_media(
    client: Any, media: Media, folder: Path | None, max_bytes: int
) -> tuple[str, InboundFile | None]:
    """The note the model reads about `media`, and the saved file for the gateway's media
    path (None: not saved, `folder` None being a sender who may not save files)."""
    described = f"{media.name} ({media.mime}, {media.size} bytes)"
    if folder is None:
        return described, None
    if media.size > max_bytes:
        return f"{described}, not saved: larger than {max_bytes // 1024} KiB", None
    data = await _download(client, media, max_bytes)
    if data is None:
        return f"{described}, not saved: the download failed", None
    saved = receive_file(folder, media.name, data, media.mime, voice=media.voice)
    return describe(saved), saved


async def _download(client: Any, media: Media, max_bytes: int) -> bytes | None:
    from mautrix.types import ContentURI

    if not media.url or not media.url.startswith("mxc://"):
        return None
    try:
        data = await client.download_media(ContentURI(media.url))
    except Exception as exc:
        log.warning("matrix: downloading %s failed: %s", media.url, exc)
        return None
    if len(data) > max_bytes:
        return None
    if media.encrypted_file is None:
        return bytes(data)
    from mautrix.crypto.attachments import decrypt_attachment

    info = media.encrypted_file
    try:
        return decrypt_attachment(data, info["key"]["k"], info["hashes"]["sha256"], info["iv"])
    except Exception as exc:  # a wrong hash: tampered with on the way
        log.warning("matrix: an encrypted attachment did not decrypt: %s", exc)
        return None


def msgtype_for(mime: str) -> str:
    for prefix, msgtype in (("image/", "m.image"), ("audio/", "m.audio"), ("video/", "m.video")):
        if mime.startswith(prefix):
            return msgtype
    return "m.file"


async def upload_content(
    client: Any, file: OutgoingFile, caption: str | None, *, encrypted: bool
) -> dict[str, Any]:
    """Upload `file` and return the message content that shows it."""
    content: dict[str, Any] = {
        "msgtype": msgtype_for(file.mime),
        "body": caption or file.name,
        "filename": file.name,
        "info": {"mimetype": file.mime, "size": len(file.data)},
        "m.mentions": {},
    }
    if file.voice:  # a spoken reply: shown as a voice message, not a music file
        content["msgtype"] = "m.audio"
        content[VOICE_FLAG] = {}
        content["org.matrix.msc1767.audio"] = {}
    if encrypted:
        from mautrix.crypto.attachments import encrypt_attachment

        ciphertext, info = encrypt_attachment(file.data)
        info.url = await client.upload_media(ciphertext, mime_type="application/octet-stream")
        content["file"] = info.serialize()
    else:
        content["url"] = str(
            await client.upload_media(file.data, mime_type=file.mime, filename=file.name)
        )
    return content


__all__ = ["msgtype_for", "save_media", "upload_content"]
