"""Telegram updates as `MessageEvent`s: chat types, forum topics, replies, media notes."""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Awaitable, Callable

from telegram import CallbackQuery, Chat, Message, User

from herald.gateway.contracts import ChatType, InboundFile, MessageEvent

PLATFORM = "telegram"
Fetcher = Callable[[str], Callable[[], Awaitable[bytes]]]  # file_id -> download it


def chat_type(chat: Chat) -> ChatType:
    """private stays private; group and supergroup are both a group; channel is a channel."""
    if chat.type == Chat.PRIVATE:
        return "private"
    if chat.type == Chat.CHANNEL:
        return "channel"
    return "group"


def thread_of(message: Message) -> str | None:
    """The forum topic a message is in. In ordinary supergroups `message_thread_id` names a
    reply chain, which is not a conversation of its own, so only topic messages count."""
    if message.is_topic_message and message.message_thread_id is not None:
        return str(message.message_thread_id)
    return None


def reply_target(message: Message) -> str | None:
    """The message this one answers; a topic's own creation message is not a reply."""
    original = message.reply_to_message
    if original is None or original.forum_topic_created is not None:
        return None
    if message.is_topic_message and original.message_id == message.message_thread_id:
        return None
    return str(original.message_id)


def user_name(user: User | None) -> str | None:
    """The @username without the @ (unique and owned by the user), never the display name:
    allowlists match on it, and anyone can pick any display name."""
    return user.username if user is not None and user.username else None


def media_notes(message: Message) -> tuple[str, ...]:
    notes: list[str] = []
    if message.photo:
        largest = max(message.photo, key=lambda size: size.width * size.height)
        notes.append(f"photo {largest.width}x{largest.height}")
    if message.document is not None:
        doc = message.document
        details = ", ".join(
            part
            for part in (doc.mime_type, f"{doc.file_size} bytes" if doc.file_size else None)
            if part
        )
        name = doc.file_name or "unnamed"
        notes.append(f"document {name}" + (f" ({details})" if details else ""))
    if message.voice is not None:
        notes.append(f"voice message {_seconds(message.voice)} s")
    if message.audio is not None:
        title = message.audio.title or message.audio.file_name or "audio"
        notes.append(f"audio {title} {_seconds(message.audio)} s")
    if message.video is not None:
        video = message.video
        notes.append(f"video {video.width}x{video.height} {_seconds(video)} s")
    if message.video_note is not None:
        notes.append(f"video note {_seconds(message.video_note)} s")
    if message.animation is not None:
        notes.append("animation")
    if message.sticker is not None:
        notes.append(f"sticker {message.sticker.emoji or ''}".rstrip())
    if message.location is not None:
        notes.append(f"location {message.location.latitude:.5f},{message.location.longitude:.5f}")
    if message.contact is not None:
        notes.append(f"contact {message.contact.first_name}")
    if message.poll is not None:
        notes.append(f"poll {message.poll.question}")
    return tuple(notes)


def inbound_files(message: Message, fetcher: Fetcher) -> tuple[InboundFile, ...]:
    """The photo, voice note, audio file or document of `message`, each downloaded only
    when the runner asks (after the sender is authorized) through `fetcher`."""
    files: list[InboundFile] = []
    number = message.message_id
    if message.photo:
        largest = max(message.photo, key=lambda size: size.width * size.height)
        files.append(
            InboundFile(
                f"photo-{number}.jpg",
                "image/jpeg",
                largest.file_size,
                fetch=fetcher(largest.file_id),
            )
        )
    if message.voice is not None:
        voice = message.voice
        mime = voice.mime_type or "audio/ogg"
        files.append(
            InboundFile(
                f"voice-{number}.ogg", mime, voice.file_size, True, fetch=fetcher(voice.file_id)
            )
        )
    if message.audio is not None:
        audio = message.audio
        name = audio.file_name or f"audio-{number}.mp3"
        mime = audio.mime_type or "audio/mpeg"
        files.append(InboundFile(name, mime, audio.file_size, fetch=fetcher(audio.file_id)))
    if message.document is not None:
        doc = message.document
        name = doc.file_name or f"document-{number}"
        mime = doc.mime_type or "application/octet-stream"
        files.append(InboundFile(name, mime, doc.file_size, fetch=fetcher(doc.file_id)))
    return tuple(files)


def period_seconds(obj: object, attribute: str) -> float:
    """A python-telegram-bot time period (int seconds or timedelta, depending on
    PTB_TIMEDELTA) in seconds, without the library's deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = getattr(obj, attribute, None)
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value or 0)


def _seconds(media: object) -> int:
    return int(period_seconds(media, "duration"))


def addressed_elsewhere(text: str, bot_username: str | None) -> bool:
    """`/cmd@otherbot` in a group is meant for another bot."""
    if not text.startswith("/") or bot_username is None:
        return False
    head = text.split(maxsplit=1)[0]
    _, at, target = head.partition("@")
    return bool(at) and target.lower() != bot_username.lower()


def is_start_command(text: str) -> bool:
    """`/start` (or `/start@bot`, or with a deep-link payload): what a Telegram client sends
    when a person opens the bot."""
    head = text.split(maxsplit=1)[0] if text.strip() else ""
    return head.split("@", 1)[0].lower() == "/start"


def event_from_message(message: Message) -> MessageEvent:
    text = message.text if message.text is not None else (message.caption or "")
    sender = message.from_user
    return MessageEvent(
        platform=PLATFORM,
        chat_id=str(message.chat.id),
        user_id=str(sender.id) if sender is not None else str(message.chat.id),
        text=text,
        chat_type=chat_type(message.chat),
        thread_id=thread_of(message),
        message_id=str(message.message_id),
        reply_to=reply_target(message),
        user_name=user_name(sender),
        media=media_notes(message),
        raw=message,
    )


def event_from_callback(query: CallbackQuery, data: str, message: Message) -> MessageEvent:
    """A button press, as the text its data stands for, from the presser, in the chat (and
    topic) of the message that carried the button; it answers that message."""
    return MessageEvent(
        platform=PLATFORM,
        chat_id=str(message.chat.id),
        user_id=str(query.from_user.id),
        text=data,
        chat_type=chat_type(message.chat),
        thread_id=thread_of(message),
        message_id=None,
        reply_to=str(message.message_id),
        user_name=user_name(query.from_user),
        raw=query,
    )
