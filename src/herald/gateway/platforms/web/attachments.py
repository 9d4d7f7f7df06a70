"""Files in the web chat, both ways.

In: the page uploads a file (`routes.upload`), which is remembered for its chat until
a message names it; that message carries it to the runner as an `InboundFile`, so a
photo reaches the model as an image and an audio file is transcribed
(herald.gateway.media). A message may name only files uploaded to its own chat.

Out: what the runner uploads to a web chat (a spoken reply, a file the `send_file`
tool sends) is kept in memory, at most `KEEP_OUT` files, and announced on the chat's
event stream with a URL the logged-in page fetches it from.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass

from herald.gateway.contracts import InboundFile, OutgoingFile
from herald.gateway.media import guess_mime

KEEP_UPLOADS = 20  # per chat, not yet sent with a message
KEEP_OUT = 50


class UnknownUpload(KeyError):
    """A message named a file this chat did not upload."""


@dataclass(frozen=True)
class SentFile:
    chat_id: str
    file: OutgoingFile


class WebFiles:
    def __init__(self) -> None:
        self._uploads: dict[str, OrderedDict[str, InboundFile]] = {}
        self._out: OrderedDict[str, SentFile] = OrderedDict()

    def uploaded(self, chat_id: str, path: str, name: str, mime: str | None, size: int) -> None:
        chat = self._uploads.setdefault(chat_id, OrderedDict())
        chat[path] = InboundFile(name, guess_mime(name, mime), size, path=path)
        while len(chat) > KEEP_UPLOADS:
            chat.popitem(last=False)

    def take(self, chat_id: str, paths: list[str]) -> tuple[InboundFile, ...]:
        """The uploads `paths` names (each once); UnknownUpload for any other path."""
        chat = self._uploads.get(chat_id, OrderedDict())
        unknown = [p for p in paths if p not in chat]
        if unknown:
            raise UnknownUpload(unknown[0])
        return tuple(chat.pop(p) for p in dict.fromkeys(paths))

    def keep_out(self, chat_id: str, file: OutgoingFile) -> str:
        file_id = secrets.token_urlsafe(12)
        self._out[file_id] = SentFile(chat_id, file)
        while len(self._out) > KEEP_OUT:
            self._out.popitem(last=False)
        return file_id

    def sent(self, chat_id: str, file_id: str) -> OutgoingFile | None:
        kept = self._out.get(file_id)
        return kept.file if kept is not None and kept.chat_id == chat_id else None


__all__ = ["UnknownUpload", "WebFiles"]
