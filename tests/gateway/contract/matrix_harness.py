"""Matrix under the adapter contract: the real adapter (mautrix) against a real Synapse,
through a fault-injecting proxy (`herald.testing.synapse_proxy`); the test's users talk
to Synapse directly. One Synapse per test worker (`shared_synapse`), new users and rooms
per test. What the bot sent is read from Synapse's own database, edits applied.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from harness import FileSeen, PlatformHarness, Sent, Where

from herald.gateway.approvals import REACTION_FOR
from herald.gateway.platforms.matrix.adapter import MATRIX_MAX_MESSAGE
from herald.testing.synapse import (
    MatrixUser,
    SynapseServer,
    SynapseUnavailable,
    shared_synapse,
    unique,
)
from herald.testing.synapse_proxy import SynapseProxy

_DATA_FOR = {emoji: data for data, emoji in REACTION_FOR.items()}
MEDIA = {"m.file", "m.image", "m.audio", "m.video"}
# How Element marks a recorded voice message (MSC3245, with MSC1767's audio part)
VOICE = {"org.matrix.msc3245.voice": {}, "org.matrix.msc1767.audio": {"duration": 1000}}


class MatrixHarness(PlatformHarness):
    name = "matrix"
    media = True

    def __init__(self, *, encrypted_rooms: bool = False) -> None:
        self.encrypted_rooms = encrypted_rooms
        self.synapse: SynapseServer
        self.proxy: SynapseProxy | None = None

    # ---- set-up ------------------------------------------------------------------------------

    def start(self) -> None:
        try:
            self.synapse = shared_synapse()
        except SynapseUnavailable as exc:
            pytest.skip(f"no Synapse homeserver: {exc}")
        s = self.synapse
        self.bot = s.register(unique("herald"))
        self.owner_user = s.register(unique("owner"))
        self.member_user = s.register(unique("dana"))
        self.stranger = s.register(unique("eve"))
        self.owner = self.owner_user.user_id
        self.member = self.member_user.user_id
        self.dm = self.make_room(self.owner_user, [self.bot], direct=True)
        self.group = self.make_room(self.owner_user, [self.bot, self.member_user, self.stranger])
        self.thread_a = s.send(self.owner_user, self.group, "m.room.message", _text("thread A"))
        self.thread_b = s.send(self.owner_user, self.group, "m.room.message", _text("thread B"))
        self.proxy = SynapseProxy(s.url, self.bot.user_id).start()

    def make_room(
        self, creator: MatrixUser, members: list[MatrixUser], *, direct: bool = False
    ) -> str:
        body: dict[str, Any] = {"preset": "private_chat", "is_direct": direct}
        body["invite"] = [m.user_id for m in members]
        if self.encrypted_rooms:
            body["initial_state"] = [
                {
                    "type": "m.room.encryption",
                    "state_key": "",
                    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
                }
            ]
        room = self.synapse.request(
            "POST", "/_matrix/client/v3/createRoom", body, token=creator.access_token
        )["room_id"]
        for member in members:
            self.synapse.request(
                "POST", f"/_matrix/client/v3/join/{room}", {}, token=member.access_token
            )
        return str(room)

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()

    def platform_config(self) -> dict[str, Any]:
        assert self.proxy is not None
        return {
            "enabled": True,
            "homeserver": self.proxy.url,
            "user_id": self.bot.user_id,
            "access_token": "${MATRIX_ACCESS_TOKEN}",
            "allowed_users": [self.owner, self.member],
            "edit_interval_seconds": 0.2,
            "sync_timeout_seconds": 5.0,
        }

    def env(self) -> dict[str, str]:
        return {"MATRIX_ACCESS_TOKEN": self.bot.access_token}

    def liveness_config(self) -> dict[str, Any]:
        return {"sync_timeout_seconds": 1.0}

    def max_length(self) -> int:
        return MATRIX_MAX_MESSAGE

    # ---- playing the users -------------------------------------------------------------------

    def _user(self, user_id: str) -> MatrixUser:
        users = (self.owner_user, self.member_user, self.stranger)
        return next(u for u in users if u.user_id == user_id)

    def _room(self, where: Where) -> str:
        return self.dm if where == "dm" else self.group

    def say(
        self,
        user: str,
        text: str,
        *,
        where: Where = "dm",
        thread: str | None = None,
        attachment: tuple[str, str, bytes] | None = None,
    ) -> str:
        sender = self._user(user)
        content: dict[str, Any] = _text(text)
        if where == "group":  # a mention, as Element writes it
            content = _text(f"{self.bot.user_id}: {text}")
            content["m.mentions"] = {"user_ids": [self.bot.user_id]}
        if attachment is not None:
            name, mime, data = attachment
            mxc = self.synapse.upload(sender, name, mime, data)
            content.update(
                msgtype=_msgtype(mime),
                filename=name,
                url=mxc,
                info={"mimetype": mime, "size": len(data)},
            )
            if mime.startswith("audio/"):  # recorded in Element: a voice note
                content.update(VOICE)
        if thread is not None:
            content["m.relates_to"] = {
                "rel_type": "m.thread",
                "event_id": thread,
                "is_falling_back": True,
                "m.in_reply_to": {"event_id": thread},
            }
        return self.synapse.send(sender, self._room(where), "m.room.message", content)

    def press(self, user: str, sent: Sent, data: str, *, where: Where = "dm") -> None:
        relation = {"rel_type": "m.annotation", "event_id": sent.ref, "key": REACTION_FOR[data]}
        self.synapse.send(
            self._user(user), self._room(where), "m.reaction", {"m.relates_to": relation}
        )

    def replay_last_event(self) -> None:
        assert self.proxy is not None
        self.proxy.replay_last()

    async def replay_taken(self) -> None:
        assert self.proxy is not None
        for _ in range(600):
            if self.proxy.replayed.is_set():
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("matrix: no sync went out with the rewound token")

    def fail_sends(self, times: int) -> None:
        assert self.proxy is not None
        self.proxy.fail_sends(times)

    def fail_uploads(self, times: int) -> None:
        assert self.proxy is not None
        self.proxy.fail_uploads(times)

    def silence(self, on: bool) -> None:
        assert self.proxy is not None
        self.proxy.silence(on)

    def drop_connections_every(self, seconds: float | None) -> None:
        assert self.proxy is not None
        self.proxy.drop_connections_every(seconds)

    def storm(self, on: bool) -> None:
        assert self.proxy is not None
        self.proxy.storm(on)

    # ---- what the bot did --------------------------------------------------------------------

    def bot_events(self, where: Where = "dm") -> list[dict[str, Any]]:
        return self.synapse.events(self._room(where), self.bot.user_id)

    def _messages(self, where: Where, thread: str | None) -> list[dict[str, Any]]:
        """The bot's messages with every edit applied (the newest m.new_content wins)."""
        events = [e for e in self.bot_events(where) if e.get("type") == "m.room.message"]
        latest: dict[str, dict[str, Any]] = {}
        shown = []
        for event in events:
            relation = event["content"].get("m.relates_to") or {}
            if relation.get("rel_type") == "m.replace":
                latest[relation["event_id"]] = event["content"].get("m.new_content") or {}
            else:
                shown.append(event)
        found = []
        for event in shown:
            relation = event["content"].get("m.relates_to") or {}
            root = relation.get("event_id") if relation.get("rel_type") == "m.thread" else None
            if thread is not None and root != thread:
                continue
            content = {**event["content"], **latest.get(event["event_id"], {})}
            found.append({**event, "content": content, "thread": root})
        return found

    def sent(self, *, where: Where = "dm", thread: str | None = None) -> list[Sent]:
        return [_sent(e) for e in self._messages(where, thread)]

    def files(self, *, where: Where = "dm", thread: str | None = None) -> list[FileSeen]:
        return [
            FileSeen(
                str(e["content"].get("filename") or e["content"]["body"]),
                self.synapse.media(e["content"]["url"]),
                str(e["content"].get("body") or ""),
            )
            for e in self._messages(where, thread)
            if e["content"].get("msgtype") in MEDIA and e["content"].get("url")
        ]


def _msgtype(mime: str) -> str:
    return {"image": "m.image", "audio": "m.audio"}.get(mime.split("/")[0], "m.file")


def _text(body: str) -> dict[str, Any]:
    return {"msgtype": "m.text", "body": body}


def _sent(event: dict[str, Any]) -> Sent:
    content = event["content"]
    text = str(content.get("body") or "")
    buttons: tuple[str, ...] = ()
    if "\n\nReact to this message: " in text:
        choices = text.rpartition("\n\nReact to this message: ")[2]
        buttons = tuple(_DATA_FOR[c.split()[0]] for c in choices.split(" · "))
    relation = content.get("m.relates_to") or {}
    reply = (relation.get("m.in_reply_to") or {}).get("event_id")
    if relation.get("is_falling_back"):
        reply = None
    return Sent(
        ref=event["event_id"], text=text, buttons=buttons, reply_to=reply, thread=event["thread"]
    )
