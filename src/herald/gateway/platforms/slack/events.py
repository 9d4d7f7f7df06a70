"""Slack events and interactions as `MessageEvent`s.

A DM (`channel_type` im) is a private chat. In a channel every conversation is a
thread: a top-level mention starts one (its own ts becomes the thread), a message
in a thread continues it, so each thread is a session and the replies stay in it.
The bot's mention is removed from the text. `event_id` is Slack's `event_id` (the
same on every retry), or the interaction's trigger id.
"""

from __future__ import annotations

import re
from typing import Any

from herald.gateway.contracts import MessageEvent

BUTTON_PREFIX = "herald:"
IGNORED_SUBTYPES = {
    "bot_message",
    "message_changed",
    "message_deleted",
    "channel_join",
    "channel_leave",
    "thread_broadcast",
}


def mention_pattern(bot_user_id: str) -> re.Pattern[str]:
    return re.compile(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>")


def is_from_a_person(event: dict[str, Any], bot_user_id: str) -> bool:
    if event.get("bot_id") or event.get("user") in (None, bot_user_id):
        return False
    return event.get("subtype") in (None, "file_share")


def media_notes(files: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(
        f"{f.get('name', 'file')} ({f.get('mimetype', 'file')}, {f.get('size', 0)} bytes)"
        for f in files
    )


def event_from_message(
    event: dict[str, Any], event_id: str | None, bot_user_id: str
) -> MessageEvent:
    channel = str(event.get("channel"))
    private = event.get("channel_type") == "im"
    thread = event.get("thread_ts")
    if not private and not thread:
        thread = event.get("ts")  # a top-level message in a channel starts a thread
    text = mention_pattern(bot_user_id).sub("", str(event.get("text") or "")).strip()
    return MessageEvent(
        platform="slack",
        chat_id=channel,
        user_id=str(event.get("user")),
        text=text,
        chat_type="private" if private else "group",
        thread_id=None if private else str(thread),
        message_id=str(event.get("ts")),
        user_name=None,  # Slack sends ids only; allowlists use member ids
        guild_id=str(event.get("team")) if event.get("team") else None,
        media=media_notes(event.get("files") or []),
        event_id=event_id,
        raw=event,
    )


def event_from_action(body: dict[str, Any], action: dict[str, Any]) -> MessageEvent:
    channel = str((body.get("channel") or {}).get("id") or body["container"]["channel_id"])
    message = body.get("message") or {}
    private = channel.startswith("D")
    thread = message.get("thread_ts") or (None if private else message.get("ts"))
    return MessageEvent(
        platform="slack",
        chat_id=channel,
        user_id=str(body["user"]["id"]),
        text=str(action.get("value") or ""),
        chat_type="private" if private else "group",
        thread_id=None if private else (str(thread) if thread else None),
        message_id=None,  # a press is not a message; it answers the one with the button
        reply_to=str(message.get("ts")) if message.get("ts") else None,
        user_name=None,  # Slack names can be changed and reused: member ids only
        guild_id=str((body.get("team") or {}).get("id") or "") or None,
        event_id=f"action:{body.get('trigger_id')}",
        raw=body,
    )


def event_from_command(command: dict[str, Any]) -> MessageEvent:
    channel = str(command.get("channel_id"))
    private = channel.startswith("D")
    text = f"{command.get('command')} {command.get('text') or ''}".strip()
    return MessageEvent(
        platform="slack",
        chat_id=channel,
        user_id=str(command.get("user_id")),
        text=text,
        chat_type="private" if private else "group",
        user_name=None,  # Slack names can be changed and reused: member ids only
        guild_id=command.get("team_id"),
        event_id=f"command:{command.get('trigger_id')}",
        raw=command,
    )
