"""The fake Discord's world: users, guilds, channels, messages and what the bot did.

Everything is JSON as Discord sends it, so the real discord.py parses it. One
re-entrant condition guards the world; tests wait on it and every change notifies it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from herald.testing.fake_discord.records import (
    ApiCall,
    EditRecord,
    Fault,
    GatewayCounters,
    InteractionResponse,
    SentMessage,
)
from herald.testing.waiting import wait_on

T = TypeVar("T")

CHANNEL_TEXT, CHANNEL_DM, CHANNEL_PUBLIC_THREAD = 0, 1, 11
ALL_PERMISSIONS = str((1 << 50) - 1)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


class DiscordWorld:
    def __init__(self, token: str, bot_name: str) -> None:
        self.token = token
        self.cond = threading.Condition(threading.RLock())
        self._ids = itertools.count(1_100_000_000_000_000_001)
        self.application_id = self.next_id()
        self.bot_user = self.user_json(self.application_id, bot_name, bot=True)
        self.users: dict[int, dict[str, Any]] = {self.application_id: self.bot_user}
        self.guilds: dict[int, dict[str, Any]] = {}
        self.channels: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}  # CDN path -> bytes (user attachments)
        self.sent: list[SentMessage] = []
        self.edits: list[EditRecord] = []
        self.deleted: list[int] = []
        self.typing: list[int] = []
        self.interaction_responses: list[InteractionResponse] = []
        self.interactions: dict[int, dict[str, Any]] = {}  # id -> the interaction JSON
        self.commands: list[dict[str, Any]] = []
        self.calls: list[ApiCall] = []
        self.faults: list[Fault] = []
        self.storm: int | None = None  # every REST call answers this status while set
        self.gateway = GatewayCounters()

    # ---- ids and JSON -------------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    @staticmethod
    def user_json(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
        return {
            "id": str(user_id),
            "username": name,
            "global_name": name,
            "discriminator": "0",
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
        }

    def member_json(self, guild_id: int, user_id: int) -> dict[str, Any]:
        return {
            "user": self.users[user_id],
            "roles": [],
            "joined_at": now_iso(),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "permissions": ALL_PERMISSIONS,
        }

    def guild_json(self, guild_id: int) -> dict[str, Any]:
        guild = self.guilds[guild_id]
        channels = [c for c in self.channels.values() if c.get("guild_id") == str(guild_id)]
        return {
            "id": str(guild_id),
            "name": guild["name"],
            "icon": None,
            "owner_id": guild["owner_id"],
            "roles": [
                {
                    "id": str(guild_id),
                    "name": "@everyone",
                    "permissions": ALL_PERMISSIONS,
                    "position": 0,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                    "flags": 0,
                }
            ],
            "emojis": [],
            "stickers": [],
            "features": [],
            "channels": [c for c in channels if c["type"] != CHANNEL_PUBLIC_THREAD],
            "threads": [c for c in channels if c["type"] == CHANNEL_PUBLIC_THREAD],
            "members": [self.member_json(guild_id, self.application_id)],
            "member_count": len(guild["members"]),
            "presences": [],
            "voice_states": [],
            "large": False,
            "unavailable": False,
            "joined_at": now_iso(),
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "nsfw_level": 0,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "system_channel_flags": 0,
        }

    # ---- the world as tests build it ------------------------------------------------------------

    def add_user(self, name: str, user_id: int | None = None) -> int:
        with self.cond:
            uid = user_id or self.next_id()
            self.users[uid] = self.user_json(uid, name)
            return uid

    def add_guild(self, name: str, owner_id: int) -> int:
        with self.cond:
            gid = self.next_id()
            self.guilds[gid] = {"name": name, "owner_id": str(owner_id), "members": {owner_id}}
            return gid

    def add_channel(self, guild_id: int, name: str) -> int:
        with self.cond:
            cid = self.next_id()
            self.channels[cid] = {
                "id": str(cid),
                "type": CHANNEL_TEXT,
                "guild_id": str(guild_id),
                "name": name,
                "position": len(self.channels),
                "permission_overwrites": [],
                "nsfw": False,
                "parent_id": None,
                "topic": None,
                "last_message_id": None,
                "rate_limit_per_user": 0,
            }
            return cid

    def add_thread(self, parent_id: int, name: str, owner_id: int) -> int:
        with self.cond:
            parent = self.channels[parent_id]
            tid = self.next_id()
            self.channels[tid] = {
                "id": str(tid),
                "type": CHANNEL_PUBLIC_THREAD,
                "guild_id": parent["guild_id"],
                "parent_id": str(parent_id),
                "name": name,
                "owner_id": str(owner_id),
                "last_message_id": None,
                "rate_limit_per_user": 0,
                "message_count": 0,
                "member_count": 1,
                "flags": 0,
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": now_iso(),
                    "locked": False,
                },
            }
            return tid

    def dm_channel_for(self, user_id: int) -> int:
        with self.cond:
            for cid, channel in self.channels.items():
                if channel["type"] == CHANNEL_DM and channel["recipients"][0]["id"] == str(user_id):
                    return cid
            cid = self.next_id()
            self.channels[cid] = {
                "id": str(cid),
                "type": CHANNEL_DM,
                "recipients": [self.users[user_id]],
                "last_message_id": None,
            }
            return cid

    def message_json(
        self,
        channel_id: int,
        author_id: int,
        content: str,
        *,
        mentions: list[int] = (),  # type: ignore[assignment]
        reply_to: int | None = None,
        attachments: list[dict[str, Any]] | None = None,
        components: list[dict[str, Any]] | None = None,
        message_id: int | None = None,
    ) -> dict[str, Any]:
        channel = self.channels[channel_id]
        mid = message_id or self.next_id()
        message: dict[str, Any] = {
            "id": str(mid),
            "channel_id": str(channel_id),
            "author": self.users[author_id],
            "content": content,
            "timestamp": now_iso(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [self.users[u] for u in mentions],
            "mention_roles": [],
            "attachments": attachments or [],
            "embeds": [],
            "pinned": False,
            "type": 19 if reply_to else 0,
            "flags": 0,
            "components": components or [],
        }
        if channel.get("guild_id"):
            message["guild_id"] = channel["guild_id"]
            member = self.member_json(int(channel["guild_id"]), author_id)
            message["member"] = {k: v for k, v in member.items() if k != "user"}
        if reply_to is not None:
            message["message_reference"] = {
                "message_id": str(reply_to),
                "channel_id": str(channel_id),
                "type": 0,
            }
            if reply_to in self.messages:
                message["referenced_message"] = self.messages[reply_to]
        self.messages[mid] = message
        return message

    # ---- records and waiting ---------------------------------------------------------------------

    def record(self, call: ApiCall) -> None:
        with self.cond:
            self.calls.append(call)
            self.cond.notify_all()

    def take_fault(self, method: str, path: str, uploading: bool = False) -> Fault | None:
        with self.cond:
            if self.storm is not None:
                return Fault("*", status=self.storm)
            for fault in self.faults:
                if fault.matches(method, path, uploading):
                    fault.times -= 1
                    if fault.times <= 0:
                        self.faults.remove(fault)
                    return fault
            return None

    def changed(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, probe: Callable[[], T | None], timeout: float, what: str) -> T:
        return wait_on(self.cond, probe, timeout, fake="fake Discord", what=what)
