"""The fake Discord REST API (the subset discord.py uses for a bot Herald runs).

Messages are validated the way Discord does (2,000 characters, an empty message is
refused), files come as multipart `payload_json` + `files[n]`, and scripted faults
answer 5xx, 429 (with Discord's rate-limit headers and body) or cut the connection.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from herald.testing.fake_discord.gateway import FakeGateway
from herald.testing.fake_discord.records import (
    MAX_MESSAGE_LENGTH,
    ApiCall,
    EditRecord,
    InteractionResponse,
    SentMessage,
    UploadedFile,
)
from herald.testing.fake_discord.world import DiscordWorld

API = "/api/v10"
STORM_LATENCY = 0.3  # an overloaded API answers its errors slowly, not at once


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # discord.py parses a body only when the content type is exactly application/json.
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers={**(headers or {}), "Content-Type": "application/json"},
    )


def _error(status: int, code: int, message: str) -> web.Response:
    return _json({"code": code, "message": message}, status=status)


class FakeRest:
    def __init__(self, world: DiscordWorld, gateway: FakeGateway, base_url: Any) -> None:
        self.world = world
        self.gateway = gateway
        self.base_url = base_url  # a callable: the server's http://127.0.0.1:port

    def routes(self) -> list[web.RouteDef]:
        return [
            web.route("*", API + "/{tail:.*}", self.handle),
            web.get("/attachments/{path:.*}", self.cdn),
        ]

    async def cdn(self, request: web.Request) -> web.Response:
        data = self.world.files.get(request.match_info["path"])
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body, files = await self._read_body(request)
        fault = self.world.take_fault(request.method, path, uploading=bool(files))
        if fault is not None and self.world.storm is not None:
            await asyncio.sleep(STORM_LATENCY)
        if fault is not None:
            self.world.record(ApiCall(request.method, path, body, fault.status))
            if fault.drop:
                if request.transport is not None:
                    request.transport.abort()
                raise web.HTTPInternalServerError()  # never reaches the client
            if fault.status == 429:
                headers = {
                    "Retry-After": str(fault.retry_after),
                    "Via": "1.1 google",  # discord.py takes a 429 without it for a Cloudflare ban
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset-After": str(fault.retry_after),
                    "X-RateLimit-Bucket": "fake-bucket",
                    "X-RateLimit-Scope": "global" if fault.is_global else "user",
                }
                if fault.is_global:
                    headers["X-RateLimit-Global"] = "true"
                answer = {
                    "message": "You are being rate limited.",
                    "retry_after": fault.retry_after,
                    "global": fault.is_global,
                }
                return _json(answer, status=429, headers=headers)
            return _error(fault.status, 0, f"{fault.status}: the fake server's scripted failure")
        # Interaction callbacks and followups carry their own token in the path.
        by_interaction_token = path.startswith(("/interactions/", "/webhooks/"))
        if not by_interaction_token and request.headers.get("Authorization") != (
            f"Bot {self.world.token}"
        ):
            self.world.record(ApiCall(request.method, path, body, 401))
            return _error(401, 0, "401: Unauthorized")
        response = self._route(request.method, path.rstrip("/"), body, files, request)
        self.world.record(ApiCall(request.method, path, body, response.status))
        return response

    async def _read_body(
        self, request: web.Request
    ) -> tuple[dict[str, Any] | None, list[UploadedFile]]:
        if request.content_type.startswith("multipart/"):
            body: dict[str, Any] | None = None
            files: list[UploadedFile] = []
            reader = await request.multipart()
            async for part in reader:
                if part.name == "payload_json":  # type: ignore[union-attr]
                    body = json.loads(await part.text())  # type: ignore[union-attr]
                else:
                    data = await part.read()  # type: ignore[union-attr]
                    files.append(UploadedFile(part.filename or "file", bytes(data)))  # type: ignore[union-attr]
            return body, files
        if request.can_read_body:
            raw = await request.read()
            return (json.loads(raw) if raw else None), []
        return None, []

    # ---- routing ----------------------------------------------------------------------------------

    def _route(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        files: list[UploadedFile],
        request: web.Request,
    ) -> web.Response:
        parts = path.strip("/").split("/")
        w = self.world
        if path == "/users/@me":
            return _json(w.bot_user)
        if path == "/oauth2/applications/@me":
            return _json(self._application())
        if path == "/gateway/bot" or path == "/gateway":
            return _json(
                {
                    "url": self.gateway.resume_url,
                    "shards": 1,
                    "session_start_limit": {
                        "total": 1000,
                        "remaining": 999,
                        "reset_after": 0,
                        "max_concurrency": 1,
                    },
                }
            )
        if path == "/users/@me/channels" and method == "POST":
            user_id = int((body or {})["recipient_id"])
            if user_id not in w.users:
                return _error(400, 50007, "Cannot send messages to this user")
            return _json(w.channels[w.dm_channel_for(user_id)])
        if parts[0] == "applications" and parts[-1] == "commands":
            if method == "PUT":
                with w.cond:
                    w.commands = [dict(c, id=str(w.next_id())) for c in body or []]
                    answer = [
                        dict(c, application_id=str(w.application_id), version="1")
                        for c in w.commands
                    ]
                    w.changed()
                return _json(answer)
            return _json(w.commands)
        if parts[0] == "channels":
            return self._channels(method, parts, body, files)
        if parts[0] == "interactions" and parts[-1] == "callback":
            return self._interaction_callback(int(parts[1]), body or {}, files)
        if parts[0] == "webhooks":
            return self._webhook(method, parts, body or {}, files)
        return _error(404, 0, f"404: Not Found ({method} {path})")

    def _application(self) -> dict[str, Any]:
        w = self.world
        return {
            "id": str(w.application_id),
            "name": w.bot_user["username"],
            "icon": None,
            "description": "",
            "bot_public": False,
            "bot_require_code_grant": False,
            "owner": w.bot_user,
            "verify_key": "0" * 64,
            "flags": 0,
            "team": None,
            "summary": "",
            "rpc_origins": [],
        }

    def _channels(
        self, method: str, parts: list[str], body: dict[str, Any] | None, files: list[UploadedFile]
    ) -> web.Response:
        w = self.world
        channel_id = int(parts[1])
        if channel_id not in w.channels:
            return _error(404, 10003, "Unknown Channel")
        if len(parts) == 2:
            return _json(w.channels[channel_id])
        if parts[2] == "typing":
            with w.cond:
                w.typing.append(channel_id)
                w.changed()
            return web.Response(status=204)
        if parts[2] != "messages":
            return _error(404, 0, "404: Not Found")
        if len(parts) == 3 and method == "POST":
            return self._create_message(channel_id, body or {}, files, via="channel")
        message_id = int(parts[3])
        if message_id not in w.messages:
            return _error(404, 10008, "Unknown Message")
        if method == "PATCH":
            return self._edit_message(channel_id, message_id, body or {})
        if method == "DELETE":
            with w.cond:
                w.deleted.append(message_id)
                w.messages.pop(message_id, None)
                w.changed()
            return web.Response(status=204)
        return _json(w.messages[message_id])

    def _create_message(
        self,
        channel_id: int,
        body: dict[str, Any],
        files: list[UploadedFile],
        *,
        via: str,
    ) -> web.Response:
        w = self.world
        content = body.get("content") or ""
        if len(content) > MAX_MESSAGE_LENGTH:
            return _json(
                {
                    "code": 50035,
                    "message": "Invalid Form Body",
                    "errors": {"content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH"}]}},
                },
                status=400,
            )
        if not content and not files and not body.get("embeds") and not body.get("components"):
            return _error(400, 50006, "Cannot send an empty message")
        reference = (body.get("message_reference") or {}).get("message_id")
        with w.cond:
            attachments = [self._attachment(channel_id, f) for f in files]
            message = w.message_json(
                channel_id,
                w.application_id,
                content,
                reply_to=int(reference) if reference else None,
                attachments=attachments,
                components=body.get("components") or [],
            )
            w.sent.append(
                SentMessage(
                    channel_id=channel_id,
                    message_id=int(message["id"]),
                    content=content,
                    components=body.get("components") or [],
                    files=files,
                    reply_to=int(reference) if reference else None,
                    via=via,
                    ephemeral=bool((body.get("flags") or 0) & 64),
                )
            )
            w.changed()
        return _json(message)

    def _attachment(self, channel_id: int, upload: UploadedFile) -> dict[str, Any]:
        w = self.world
        attachment_id = w.next_id()
        path = f"{channel_id}/{attachment_id}/{upload.filename}"
        w.files[path] = upload.data
        url = f"{self.base_url()}/attachments/{path}"
        return {
            "id": str(attachment_id),
            "filename": upload.filename,
            "size": len(upload.data),
            "url": url,
            "proxy_url": url,
        }

    def _edit_message(self, channel_id: int, message_id: int, body: dict[str, Any]) -> web.Response:
        w = self.world
        content = body.get("content")
        if content is not None and len(content) > MAX_MESSAGE_LENGTH:
            return _error(400, 50035, "Invalid Form Body")
        with w.cond:
            message = w.messages[message_id]
            if content is not None:
                message["content"] = content
            if "components" in body:
                message["components"] = body["components"] or []
            message["edited_timestamp"] = message["timestamp"]
            w.edits.append(EditRecord(channel_id, message_id, content, body.get("components")))
            w.changed()
        return _json(message)

    def _interaction_callback(
        self, interaction_id: int, body: dict[str, Any], files: list[UploadedFile]
    ) -> web.Response:
        w = self.world
        interaction = w.interactions.get(interaction_id)
        if interaction is None:
            return _error(404, 10062, "Unknown interaction")
        kind, data = int(body.get("type", 0)), body.get("data") or {}
        with w.cond:
            if any(r.interaction_id == interaction_id for r in w.interaction_responses):
                return _error(400, 40060, "Interaction has already been acknowledged.")
            w.interaction_responses.append(InteractionResponse(interaction_id, kind, data))
            w.changed()
        channel_id = int(interaction["channel_id"])
        message: dict[str, Any] | None = None
        if kind == 4:  # a reply: it is a message in the channel
            self._create_message(channel_id, data, files, via="interaction")
            interaction["_original"] = w.sent[-1].message_id
            message = w.messages[w.sent[-1].message_id]
        elif kind == 7 and "message" in interaction:  # update the pressed message
            self._edit_message(channel_id, int(interaction["message"]["id"]), data)
            message = w.messages.get(int(interaction["message"]["id"]))
        answer: dict[str, Any] = {
            "interaction": {
                "id": str(interaction_id),
                "type": interaction["type"],
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool((data.get("flags") or 0) & 64),
            },
            "resource": {"type": kind},
        }
        if message is not None:
            answer["interaction"]["response_message_id"] = message["id"]
            answer["resource"]["message"] = message
        return _json(answer)

    def _webhook(
        self, method: str, parts: list[str], body: dict[str, Any], files: list[UploadedFile]
    ) -> web.Response:
        w = self.world
        token = parts[2] if len(parts) > 2 else ""
        interaction = next((i for i in w.interactions.values() if i.get("token") == token), None)
        if interaction is None:
            return _error(404, 10015, "Unknown Webhook")
        channel_id = int(interaction["channel_id"])
        if method == "POST":
            return self._create_message(channel_id, body, files, via="followup")
        original = interaction.get("_original")
        if parts[-1] == "@original" and original is None and method == "PATCH":
            response = self._create_message(channel_id, body, files, via="interaction")
            interaction["_original"] = w.sent[-1].message_id
            return response
        target = int(original) if parts[-1] == "@original" else int(parts[-1])
        if method == "PATCH":
            return self._edit_message(channel_id, target, body)
        return _json(w.messages.get(target, {}))
