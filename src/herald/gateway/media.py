"""Photos and voice notes from every chat entrance, on one path.

Adapters describe what came with a message as `InboundFile`s on the event: saved
already through `receive_file` (the gateway's one inbound writer, into the workdir's
``attachments/``, whose files are untrusted when read), or with a `fetch` the runner
calls only after the sender was authorized. `prepare_turn` then makes the turn:

- images become the turn's image inputs, kept under the home by reference exactly as
  ``--image`` keeps them (`Agent.attach_image`), sent as image parts to a model that
  sees images and named with the way to look at them (``vision_analyze``) otherwise;
- voice notes are transcribed through the provider's ``/v1/audio/transcriptions``
  (herald.providers.voice) and their transcript is the message, with the sender's own
  provenance (the owner's words, or untrusted ``chat:<identity>`` for anyone else);
- everything else stays a note naming where the file was saved.

A provider without audio endpoints, a file that cannot be fetched, an image that
cannot be read: each becomes a sentence for the chat, never a dropped message.
`speak_reply` speaks an answer back through ``/v1/audio/speech`` as ``voice.reply``
says and uploads it through the adapter's `send_file` (a voice message where the
platform has them).

Who reaches this: anyone the gateway's authorizer lets talk (owner, members, guests).
What they control: the bytes and names of their files, which are written only as new
files in ``attachments/`` (never over anything), and the words of their voice notes,
which carry their provenance like typed text, so a guest's transcript clears nothing
for the taint check.
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from herald.gateway.contracts import InboundFile, MessageEvent, OutgoingFile, PlatformAdapter
from herald.gateway.inbox import save_inbound_file
from herald.gateway.pipeline import compose_turn_text

if TYPE_CHECKING:
    from herald.config import HeraldConfig, Secrets

log = logging.getLogger(__name__)

T = TypeVar("T")
RunBlocking = Callable[[Callable[[], T]], Awaitable[T]]
VOICE_MIME = {
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "wav": "audio/wav",
}


def guess_mime(name: str, declared: str | None = None) -> str:
    """The declared MIME type, else one guessed from the file name."""
    if declared and declared != "application/octet-stream":
        return declared.split(";", 1)[0].strip().lower()
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def receive_file(
    folder: Path, name: str, data: bytes, mime: str | None = None, *, voice: bool = False
) -> InboundFile:
    """Save what a sender attached as a new file in `folder` (the gateway's one inbound
    writer: no link followed, nothing overwritten); the `InboundFile` for the event."""
    path = save_inbound_file(folder, name, data)
    return InboundFile(
        name=name, mime=guess_mime(name, mime), size=len(data), voice=voice, path=str(path)
    )


def describe(file: InboundFile) -> str:
    """The note the model reads about a file (what it is and where it was saved)."""
    size = f", {file.size:,} bytes" if file.size is not None else ""
    where = f", saved as {file.path}" if file.path else ", not saved"
    return f"{file.name} ({file.mime}{size}){where}"


@dataclass
class PreparedTurn:
    """What a message becomes: the turn's text, its images (saved files to attach), the
    voice note's transcript (shown to the user), and sentences for the chat about
    anything that could not be used."""

    text: str
    images: tuple[str, ...] = ()
    transcript: str | None = None
    heard_voice: bool = False
    problems: list[str] = field(default_factory=list)
    # Something for the model: words, a transcript, an image or another saved file. A
    # voice note that could not be transcribed, alone, is not.
    answerable: bool = True


class FileTooLarge(Exception):
    """Raised by an `InboundFile.fetch` that learns the size only from the platform (and
    stops there rather than download past the limit)."""


async def _materialize(
    file: InboundFile, folder: Path, max_bytes: int, problems: list[str], notes: list[str]
) -> InboundFile | None:
    """`file` saved into `folder` (fetched now when the adapter deferred it). A file that
    was not saved is said in the chat and noted for the model, which would otherwise
    read "see attached" about nothing."""
    if file.path is not None:
        return file
    if file.fetch is None:
        return None
    too_large = f"it is larger than {max_bytes // 1024:,} KiB"
    if file.size is not None and file.size > max_bytes:
        problems.append(f"{file.name} was not saved: {too_large}")
        notes.append(f"{file.name} ({file.mime}), not saved: {too_large}")
        return None
    try:
        data = await file.fetch()
    except asyncio.CancelledError:
        raise
    except FileTooLarge:
        data = None
    except Exception as exc:
        log.warning("fetching %s failed: %s", file.name, exc)
        problems.append(
            f"{file.name} could not be downloaded ({type(exc).__name__}); send it again"
        )
        notes.append(f"{file.name} ({file.mime}), not saved: the download failed")
        return None
    if data is None or len(data) > max_bytes:
        problems.append(f"{file.name} was not saved: {too_large}")
        notes.append(f"{file.name} ({file.mime}), not saved: {too_large}")
        return None
    saved = receive_file(folder, file.name, data, file.mime, voice=file.voice)
    return replace(saved, name=file.name)


async def prepare_turn(
    event: MessageEvent,
    *,
    folder: Path,
    max_bytes: int,
    config: HeraldConfig,
    secrets: Secrets,
    run_blocking: RunBlocking[Any],
) -> PreparedTurn:
    """The turn for `event` (authorized already): files fetched and saved, voice notes
    transcribed (on `run_blocking`, off the event loop), images listed for the agent."""
    from herald.providers.voice import VoiceError, transcribe

    problems: list[str] = []
    notes: list[str] = []
    images: list[str] = []
    transcripts: list[str] = []
    others = 0
    heard_voice = False
    for original in event.files:
        file = await _materialize(original, folder, max_bytes, problems, notes)
        if file is None:
            continue
        if not any(str(file.path) in note for note in event.media):  # not described yet
            notes.append(describe(file))
        assert file.path is not None
        if file.kind == "image":
            images.append(file.path)
        elif file.kind == "file":
            others += 1
        else:
            heard_voice = heard_voice or file.voice
            audio_path = file.path
            try:
                text = await run_blocking(lambda p=audio_path: transcribe(config, secrets, p))
            except VoiceError as exc:
                problems.append(f"🎤 Your voice note could not be transcribed: {exc}")
                continue
            if text:
                transcripts.append(text)
                heard_voice = True
            else:
                problems.append(f"🎤 {file.name} has no speech Herald could transcribe.")
    transcript = "\n\n".join(transcripts) or None
    words = "\n\n".join(part for part in (event.text.strip(), transcript) if part)
    text = compose_turn_text(replace(event, text=words, media=(*event.media, *notes)))
    answerable = bool(words or images or others)
    return PreparedTurn(text, tuple(images), transcript, heard_voice, problems, answerable)


def voice_reply_file(config: HeraldConfig, audio: bytes) -> OutgoingFile:
    fmt = config.voice.format
    name = f"reply.{'ogg' if fmt == 'opus' else fmt}"
    return OutgoingFile(name, audio, VOICE_MIME[fmt], voice=True)


async def speak_reply(
    adapter: PlatformAdapter,
    text: str,
    *,
    config: HeraldConfig,
    secrets: Secrets,
    run_blocking: RunBlocking[Any],
    send: Callable[[OutgoingFile], Awaitable[str | None]],
) -> str | None:
    """Speak `text` and send it through `send` (the adapter's file upload); None when it
    went out, else a sentence for the chat saying why the reply was not spoken."""
    from herald.providers.voice import VoiceError, speak

    if not adapter.supports_files():
        return f"🔇 The reply was not spoken: {adapter.name} cannot send audio in Herald."
    try:
        audio = await run_blocking(lambda: speak(config, secrets, text))
    except VoiceError as exc:
        return f"🔇 The reply was not spoken: {exc}"
    error = await send(voice_reply_file(config, audio))
    return None if error is None else f"🔇 The spoken reply could not be sent: {error}"


__all__ = [
    "FileTooLarge",
    "PreparedTurn",
    "describe",
    "guess_mime",
    "prepare_turn",
    "receive_file",
    "speak_reply",
    "voice_reply_file",
]
