"""The fake Slack Web API: `POST /api/<method>` with form or JSON arguments, answered
`{"ok": ...}` the way Slack does (errors are HTTP 200 with `ok: false`; 429 carries
Retry-After), plus the external upload URL and `url_private` downloads.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable
from typing import Any

from aiohttp import web

from herald.testing.fake_slack.records import (
    MAX_TEXT_LENGTH,
    ApiCall,
    PostedMessage,
    UpdateRecord,
    UploadRecord,
)
from herald.testing.fake_slack.world import SlackWorld

APP_TOKEN_METHODS = {"apps.connections.open"}


class SlackApiFailure(Exception):
    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


class FakeWebApi:
    def __init__(self, world: SlackWorld, base_url: Callable[[], str]) -> None:
        self.world = world
        self.base_url = base_url
        self.socket_url: Callable[[], str] = lambda: ""
        self.pending_uploads: dict[str, dict[str, Any]] = {}

    def routes(self) -> list[web.RouteDef]:
        return [
            web.post("/api/{method}", self.handle),
            web.get("/api/{method}", self.handle),
            web.post("/upload/{file_id}", self.upload),
            web.get("/files/{file_id}/{name}", self.download),
        ]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        args = await self._arguments(request)
        fault = self.world.take_fault(method)
        if fault is not None:
            self.world.record(ApiCall(method, args, False, fault.status))
            if fault.drop:
                if request.transport is not None:
                    request.transport.abort()
                raise web.HTTPInternalServerError()
            if fault.status == 429:
                return web.json_response(
                    {"ok": False, "error": "ratelimited"},
                    status=429,
                    headers={"Retry-After": str(fault.retry_after)},
                )
            if fault.status != 200:
                return web.Response(status=fault.status, text="upstream trouble")
            return web.json_response({"ok": False, "error": fault.error})
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        token = token or str(args.get("token") or "")
        expected = self.world.app_token if method in APP_TOKEN_METHODS else self.world.bot_token
        if token != expected:
            error = "not_allowed_token_type" if token else "not_authed"
            if token and token not in (self.world.app_token, self.world.bot_token):
                error = "invalid_auth"
            self.world.record(ApiCall(method, args, False))
            return web.json_response({"ok": False, "error": error})
        try:
            answer = self._call(method, args)
        except SlackApiFailure as failure:
            self.world.record(ApiCall(method, args, False))
            return web.json_response({"ok": False, "error": failure.error})
        self.world.record(ApiCall(method, args, True))
        return web.json_response({"ok": True, **answer})

    async def _arguments(self, request: web.Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query)
        if request.method == "POST" and request.can_read_body:
            if request.content_type == "application/json":
                args.update(await request.json())
            else:
                form = await request.post()
                args.update({k: v for k, v in form.items() if isinstance(v, str)})
        for key in ("blocks", "files", "attachments", "metadata"):
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        return args

    # ---- methods ---------------------------------------------------------------------------------

    def _call(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        w = self.world
        if method == "auth.test":
            return {
                "url": "https://fake.slack.test/",
                "team": "fake",
                "user": "herald",
                "team_id": w.team_id,
                "user_id": w.bot_user_id,
                "bot_id": w.bot_id,
                "is_enterprise_install": False,
            }
        if method == "apps.connections.open":
            with w.cond:
                w.counters.connections_opened += 1
                w.changed()
            return {"url": self.socket_url()}
        if method == "chat.postMessage":
            return self._post(args)
        if method == "chat.postEphemeral":
            posted = self._post(args, ephemeral_user=str(args.get("user") or ""))
            return {"message_ts": posted["ts"]}
        if method == "chat.update":
            return self._update(args)
        if method == "chat.delete":
            channel, ts = self._channel(args), str(args.get("ts"))
            with w.cond:
                if w.messages.pop((channel, ts), None) is None:
                    raise SlackApiFailure("message_not_found")
                w.deleted.append((channel, ts))
                w.changed()
            return {"channel": channel, "ts": ts}
        if method == "reactions.add":
            with w.cond:
                w.reactions.append((self._channel(args), str(args["timestamp"]), args["name"]))
                w.changed()
            return {}
        if method == "conversations.info":
            return {"channel": w.public(self._channel(args))}
        if method == "conversations.open":
            users = str(args.get("users") or "").split(",")
            if users[0] not in w.users:
                raise SlackApiFailure("user_not_found")
            return {"channel": {"id": w.dm_channel(users[0])}}
        if method == "users.info":
            user = w.users.get(str(args.get("user")))
            if user is None:
                raise SlackApiFailure("user_not_found")
            return {"user": user}
        if method == "files.getUploadURLExternal":
            file_id = w.next_id("F")
            self.pending_uploads[file_id] = {"filename": args["filename"], "data": None}
            return {"upload_url": f"{self.base_url()}/upload/{file_id}", "file_id": file_id}
        if method == "files.completeUploadExternal":
            return self._complete_upload(args)
        if method == "files.info":
            found = w.files.get(str(args.get("file")))
            if found is None:
                raise SlackApiFailure("file_not_found")
            return {"file": found["json"]}
        raise SlackApiFailure("unknown_method")

    def _channel(self, args: dict[str, Any]) -> str:
        channel = str(args.get("channel") or args.get("channel_id") or "")
        if channel not in self.world.channels:
            raise SlackApiFailure("channel_not_found")
        return channel

    def _post(self, args: dict[str, Any], ephemeral_user: str | None = None) -> dict[str, Any]:
        w = self.world
        channel = self._channel(args)
        text, blocks = str(args.get("text") or ""), args.get("blocks") or []
        if not text and not blocks:
            raise SlackApiFailure("no_text")
        if len(text) > MAX_TEXT_LENGTH:
            raise SlackApiFailure("msg_too_long")
        thread_ts = str(args["thread_ts"]) if args.get("thread_ts") else None
        with w.cond:
            ts = w.next_ts()
            message: dict[str, Any] = {
                "type": "message",
                "user": w.bot_user_id,
                "bot_id": w.bot_id,
                "text": text,
                "ts": ts,
                "blocks": blocks,
                "team": w.team_id,
            }
            if thread_ts:
                message["thread_ts"] = thread_ts
            w.messages[(channel, ts)] = message
            w.posted.append(
                PostedMessage(
                    channel, ts, text, blocks, thread_ts, ephemeral_user, args.get("metadata")
                )
            )
            w.changed()
        return {"channel": channel, "ts": ts, "message": message}

    def _update(self, args: dict[str, Any]) -> dict[str, Any]:
        w = self.world
        channel, ts = self._channel(args), str(args.get("ts"))
        text = args.get("text")
        if text is not None and len(str(text)) > MAX_TEXT_LENGTH:
            raise SlackApiFailure("msg_too_long")
        with w.cond:
            message = w.messages.get((channel, ts))
            if message is None:
                raise SlackApiFailure("message_not_found")
            if message.get("user") != w.bot_user_id:
                raise SlackApiFailure("cant_update_message")
            if text is not None:
                message["text"] = str(text)
            if "blocks" in args:
                message["blocks"] = args["blocks"] or []
            w.updates.append(UpdateRecord(channel, ts, text, args.get("blocks")))
            w.changed()
        return {"channel": channel, "ts": ts, "text": message["text"]}

    def _complete_upload(self, args: dict[str, Any]) -> dict[str, Any]:
        w = self.world
        channel = str(args.get("channel_id") or "") or None
        if channel is not None and channel not in w.channels:
            raise SlackApiFailure("channel_not_found")
        done = []
        with w.cond:
            for item in args.get("files") or []:
                pending = self.pending_uploads.pop(str(item["id"]), None)
                if pending is None or pending["data"] is None:
                    raise SlackApiFailure("file_not_found")
                file_json = self.file_json(str(item["id"]), pending["filename"], pending["data"])
                w.files[str(item["id"])] = {"data": pending["data"], "json": file_json}
                w.uploads.append(
                    UploadRecord(
                        str(item["id"]),
                        pending["filename"],
                        pending["data"],
                        channel,
                        str(args["thread_ts"]) if args.get("thread_ts") else None,
                        args.get("initial_comment"),
                    )
                )
                done.append(file_json)
            w.changed()
        return {"files": done}

    def file_json(self, file_id: str, name: str, data: bytes) -> dict[str, Any]:
        url = f"{self.base_url()}/files/{file_id}/{name}"
        return {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetypes.guess_type(name)[0] or "application/octet-stream",
            "filetype": name.rsplit(".", 1)[-1] if "." in name else "binary",
            "size": len(data),
            "url_private": url,
            "url_private_download": url,
        }

    # ---- bytes ----------------------------------------------------------------------------------

    async def upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        pending = self.pending_uploads.get(file_id)
        if pending is None:
            return web.Response(status=404)
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            part = await reader.next()
            data = await part.read() if part is not None else b""  # type: ignore[union-attr]
        else:
            data = await request.read()
        pending["data"] = bytes(data)
        return web.Response(text="OK - " + str(len(data)))

    async def download(self, request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if token != self.world.bot_token:
            # Slack answers an unauthenticated url_private with its login page, not the file.
            return web.Response(text="<html>sign in</html>", content_type="text/html")
        found = self.world.files.get(request.match_info["file_id"])
        if found is None:
            return web.Response(status=404)
        return web.Response(body=found["data"], content_type="application/octet-stream")
