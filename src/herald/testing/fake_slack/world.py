"""The fake Slack's world: a workspace, its users and channels, messages, and the
payloads Slack sends (event callbacks, block actions, slash commands) as JSON.

One re-entrant condition guards everything; tests wait on it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from herald.testing.fake_slack.records import (
    ApiCall,
    Envelope,
    Fault,
    PostedMessage,
    SocketCounters,
    UpdateRecord,
    UploadRecord,
)
from herald.testing.waiting import wait_on

T = TypeVar("T")


class SlackWorld:
    def __init__(self, bot_token: str, app_token: str, signing_secret: str) -> None:
        self.bot_token = bot_token
        self.app_token = app_token
        self.signing_secret = signing_secret
        self.cond = threading.Condition(threading.RLock())
        self.team_id, self.app_id = "T0FAKE001", "A0FAKE001"
        self.bot_user_id, self.bot_id = "U0BOT0001", "B0BOT0001"
        self._counter = itertools.count(1)
        self._clock = itertools.count(1)
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}  # (channel, ts) -> message
        self.files: dict[str, dict[str, Any]] = {}  # file id -> {name, data, ...}
        self.posted: list[PostedMessage] = []
        self.updates: list[UpdateRecord] = []
        self.deleted: list[tuple[str, str]] = []
        self.uploads: list[UploadRecord] = []
        self.reactions: list[tuple[str, str, str]] = []
        self.envelopes: list[Envelope] = []
        self.calls: list[ApiCall] = []
        self.faults: list[Fault] = []
        self.storm: int | None = None  # every Web API call answers this status while set
        self.counters = SocketCounters()

    # ---- ids -------------------------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._counter):08d}"

    def next_ts(self) -> str:
        # Monotonic and unique like Slack's: seconds.microseconds, strictly increasing.
        return f"{int(time.time())}.{next(self._clock):06d}"

    # ---- the workspace as tests build it ------------------------------------------------------------

    def add_user(self, name: str) -> str:
        with self.cond:
            uid = self.next_id("U")
            self.users[uid] = {
                "id": uid,
                "team_id": self.team_id,
                "name": name,
                "real_name": name,
                "is_bot": False,
                "profile": {"display_name": name, "real_name": name},
            }
            return uid

    def add_channel(self, name: str, *, private: bool = False) -> str:
        with self.cond:
            cid = self.next_id("G" if private else "C")
            self.channels[cid] = {
                "id": cid,
                "name": name,
                "is_channel": not private,
                "is_group": private,
                "is_im": False,
                "is_private": private,
                "is_member": True,
                "_type": "group" if private else "channel",
            }
            return cid

    def dm_channel(self, user_id: str) -> str:
        with self.cond:
            for cid, channel in self.channels.items():
                if channel.get("is_im") and channel.get("user") == user_id:
                    return cid
            cid = self.next_id("D")
            self.channels[cid] = {
                "id": cid,
                "is_im": True,
                "is_channel": False,
                "is_group": False,
                "user": user_id,
                "_type": "im",
            }
            return cid

    def public(self, channel_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.channels[channel_id].items() if not k.startswith("_")}

    # ---- payloads Slack sends ---------------------------------------------------------------------

    def event_callback(self, event: dict[str, Any]) -> dict[str, Any]:
        return {
            "token": "legacy-verification-token",
            "team_id": self.team_id,
            "api_app_id": self.app_id,
            "event": event,
            "type": "event_callback",
            "event_id": self.next_id("Ev"),
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": self.team_id,
                    "user_id": self.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
        }

    def user_message(
        self,
        channel_id: str,
        user_id: str,
        text: str,
        *,
        thread_ts: str | None = None,
        files: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        ts = self.next_ts()
        message: dict[str, Any] = {
            "type": "message",
            "user": user_id,
            "text": text,
            "ts": ts,
            "team": self.team_id,
            "channel": channel_id,
            "event_ts": ts,
            "channel_type": self.channels[channel_id]["_type"],
        }
        if thread_ts:
            message["thread_ts"] = thread_ts
        if files:
            message["files"] = files
            message["subtype"] = "file_share"
        self.messages[(channel_id, ts)] = message
        return message

    def block_actions(
        self, channel_id: str, message_ts: str, user_id: str, action: dict[str, Any]
    ) -> dict[str, Any]:
        message = self.messages[(channel_id, message_ts)]
        user = self.users[user_id]
        return {
            "type": "block_actions",
            "user": {
                "id": user_id,
                "username": user["name"],
                "name": user["name"],
                "team_id": self.team_id,
            },
            "api_app_id": self.app_id,
            "token": "legacy-verification-token",
            "container": {
                "type": "message",
                "message_ts": message_ts,
                "channel_id": channel_id,
                "is_ephemeral": False,
            },
            "trigger_id": self.next_id("trigger."),
            "team": {"id": self.team_id, "domain": "fake"},
            "enterprise": None,
            "is_enterprise_install": False,
            "channel": {"id": channel_id, "name": self.channels[channel_id].get("name", "")},
            "message": message,
            "state": {"values": {}},
            "response_url": "",
            "actions": [dict(action, type="button", action_ts=self.next_ts())],
        }

    def slash_command(
        self, channel_id: str, user_id: str, command: str, text: str
    ) -> dict[str, Any]:
        return {
            "token": "legacy-verification-token",
            "team_id": self.team_id,
            "team_domain": "fake",
            "channel_id": channel_id,
            "channel_name": self.channels[channel_id].get("name", "directmessage"),
            "user_id": user_id,
            "user_name": self.users[user_id]["name"],
            "command": command,
            "text": text,
            "api_app_id": self.app_id,
            "is_enterprise_install": "false",
            "response_url": "",
            "trigger_id": self.next_id("trigger."),
        }

    # ---- records and waiting ----------------------------------------------------------------------

    def record(self, call: ApiCall) -> None:
        with self.cond:
            self.calls.append(call)
            self.cond.notify_all()

    def take_fault(self, method: str) -> Fault | None:
        with self.cond:
            if self.storm is not None:
                return Fault(method, status=self.storm)
            for fault in self.faults:
                if fault.method == method:
                    fault.times -= 1
                    if fault.times <= 0:
                        self.faults.remove(fault)
                    return fault
            return None

    def changed(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, probe: Callable[[], T | None], timeout: float, what: str) -> T:
        return wait_on(self.cond, probe, timeout, fake="fake Slack", what=what)
