"""Discord messages and interactions as `MessageEvent`s.

DMs are private chats (chat id: the DM channel). Guild channels are groups (chat id:
the channel); a thread is its parent channel's chat with `thread_id` set to the
thread, so each thread is a session of its own. The bot's mention is removed from
the text. `event_id` is the message's id (a replayed MESSAGE_CREATE carries the same
one) or the interaction's.
"""

from __future__ import annotations

import re
from typing import Any

from herald.gateway.contracts import MessageEvent

BUTTON_PREFIX = "herald:"  # custom_id of Herald's buttons; the rest is the button's data
THREAD_TYPES = {10, 11, 12}  # news, public and private threads


def mention_pattern(bot_id: int) -> re.Pattern[str]:
    return re.compile(rf"<@!?{bot_id}>")


def addressed_to_bot(message: Any, bot_id: int) -> bool:
    """The message mentions the bot or replies to one of its messages."""
    if any(getattr(user, "id", None) == bot_id for user in message.mentions):
        return True
    reference = message.reference
    resolved = getattr(reference, "resolved", None) if reference is not None else None
    author = getattr(resolved, "author", None)
    return getattr(author, "id", None) == bot_id


def _place(channel: Any) -> tuple[str, str | None, str, str | None]:
    """(chat id, thread id, chat type, guild id) of a channel."""
    guild = getattr(channel, "guild", None)
    guild_id = str(guild.id) if guild is not None else None
    if guild is None:
        return str(channel.id), None, "private", None
    kind = getattr(getattr(channel, "type", None), "value", None)
    if kind in THREAD_TYPES and getattr(channel, "parent_id", None):
        return str(channel.parent_id), str(channel.id), "group", guild_id
    return str(channel.id), None, "group", guild_id


def media_notes(attachments: Any) -> tuple[str, ...]:
    notes = []
    for attachment in attachments:
        kind = attachment.content_type or "file"
        notes.append(f"{attachment.filename} ({kind}, {attachment.size} bytes)")
    return tuple(notes)


def event_from_message(message: Any, bot_id: int) -> MessageEvent:
    chat_id, thread_id, chat_type, guild_id = _place(message.channel)
    text = mention_pattern(bot_id).sub("", message.content or "").strip()
    reference = message.reference
    return MessageEvent(
        platform="discord",
        chat_id=chat_id,
        user_id=str(message.author.id),
        text=text,
        chat_type=chat_type,  # type: ignore[arg-type]
        thread_id=thread_id,
        message_id=str(message.id),
        reply_to=str(reference.message_id) if reference and reference.message_id else None,
        user_name=message.author.name,
        guild_id=guild_id,
        media=media_notes(message.attachments),
        event_id=str(message.id),
        raw=message,
    )


def event_from_interaction(interaction: Any, text: str) -> MessageEvent:
    """A button press or a slash command, as the text it stands for (`/approve`, `/stop`)."""
    chat_id, thread_id, chat_type, guild_id = _place(interaction.channel)
    message = getattr(interaction, "message", None)
    return MessageEvent(
        platform="discord",
        chat_id=chat_id,
        user_id=str(interaction.user.id),
        text=text,
        chat_type=chat_type,  # type: ignore[arg-type]
        thread_id=thread_id,
        # A press is not a message (as with Telegram's button presses): each press is
        # its own delivery, answering the message that carried the button.
        message_id=None,
        reply_to=str(message.id) if message is not None else None,
        user_name=interaction.user.name,
        guild_id=guild_id,
        event_id=f"interaction:{interaction.id}",
        raw=interaction,
    )


def button_data(custom_id: str | None) -> str | None:
    if not custom_id or not custom_id.startswith(BUTTON_PREFIX):
        return None
    return custom_id[len(BUTTON_PREFIX) :]
