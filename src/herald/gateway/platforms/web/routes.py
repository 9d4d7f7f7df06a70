"""The web chat's data routes: chats and their live events, uploads, the dashboard,
memory and skills. Every route here sits behind the login and CSRF guard of
`herald.gateway.platforms.web.app`; everything returned is redacted."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from herald.gateway.contracts import MessageEvent
from herald.gateway.inbox import InboxNameError, create_inbound_file, discard_inbound_file
from herald.gateway.platforms.web.attachments import UnknownUpload
from herald.gateway.platforms.web.errors import WebError
from herald.gateway.session_keys import build_session_key
from herald.state import reports

if TYPE_CHECKING:
    from herald.gateway.platforms.web.backend import WebBackend

CHAT_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,127}$")
MAX_TEXT = 100_000
MAX_TOOL_RESULT = 6_000


def _chat_id(chat_id: str) -> str:
    if not CHAT_ID.match(chat_id):
        raise WebError(400, "a chat id is 8-64 letters, digits, '-' or '_'")
    return chat_id


def chat_key(adapter: WebBackend, chat_id: str) -> str:
    event = MessageEvent(platform=adapter.name, chat_id=chat_id, user_id="owner", text="")
    return build_session_key(adapter.default_profile, event)


def chat_of_key(key: str) -> str | None:
    parts = key.split(":")
    return parts[-1] if len(parts) >= 5 and parts[3] == "private" else None


def transcript(adapter: WebBackend, session_id: str) -> list[dict[str, Any]]:
    """The session's messages as the page shows them: text, tool steps and results."""
    out: list[dict[str, Any]] = []
    for m in adapter.store().get_messages(session_id):
        item: dict[str, Any] = {"role": m.role, "text": adapter.redact(m.content or "")}
        if m.role == "assistant" and m.tool_calls:
            item["tool_calls"] = [
                {
                    "id": call.get("id"),
                    "name": (call.get("function") or {}).get("name", call.get("name")),
                    "arguments": adapter.redact(
                        str((call.get("function") or {}).get("arguments", call.get("arguments")))
                    ),
                }
                for call in m.tool_calls
            ]
        if m.role == "tool":
            text = item["text"]
            item["tool_call_id"] = m.tool_call_id
            item["name"] = m.tool_name
            if len(text) > MAX_TOOL_RESULT:
                item["text"] = text[:MAX_TOOL_RESULT] + f"\n… ({len(text) - MAX_TOOL_RESULT} more)"
        out.append(item)
    return out


def add_data_routes(app: FastAPI, adapter: WebBackend, base: str) -> None:

    api = base + "/api"

    def bound_session(chat_id: str) -> str | None:
        return adapter.store().report(reports.session_for_key, chat_key(adapter, chat_id))

    @app.get(api + "/chats")
    async def list_chats(q: str = "", limit: int = 50) -> dict[str, Any]:
        store = adapter.store()
        chats = store.report(reports.platform_chats, adapter.name, limit=max(1, min(limit, 200)))
        items = [
            {
                "chat_id": chat_of_key(c.session_key),
                "session_id": c.session_id,
                "title": adapter.redact(c.title or "New chat"),
                "updated_at": c.updated_at,
                "cost_usd": c.estimated_cost_usd,
            }
            for c in chats
        ]
        if not q.strip():
            return {"chats": items}
        by_session = {c["session_id"]: c for c in items}
        hits = store.search_messages(q.strip()[:200], limit=50)
        found: list[dict[str, Any]] = []
        for hit in hits:
            if any(f["session_id"] == hit.session_id for f in found):
                continue
            record = store.get_session(hit.session_id)
            entry = by_session.get(hit.session_id) or {
                "chat_id": None,
                "session_id": hit.session_id,
                "title": adapter.redact((record.title if record else None) or hit.session_id),
                "updated_at": record.updated_at if record else hit.created_at,
                "source": record.source if record else None,
            }
            found.append({**entry, "snippet": adapter.redact(hit.snippet)})
        return {"chats": found, "query": q}

    @app.get(api + "/chats/{chat_id}")
    async def open_chat(chat_id: str) -> dict[str, Any]:
        chat_id = _chat_id(chat_id)
        session_id = bound_session(chat_id)
        return {
            "chat_id": chat_id,
            "session_id": session_id,
            "running": chat_id in adapter.running,
            "last_event_id": adapter.events.last_id(chat_id),
            "messages": transcript(adapter, session_id) if session_id else [],
            "status": session_status(adapter, session_id) if session_id else None,
        }

    @app.get(api + "/sessions/{session_id}")
    async def read_session(session_id: str) -> dict[str, Any]:
        if adapter.store().get_session(session_id) is None:
            raise WebError(404, f"no session {session_id!r}")
        return {
            "session_id": session_id,
            "messages": transcript(adapter, session_id),
            "status": session_status(adapter, session_id),
        }

    @app.post(api + "/chats/{chat_id}/messages")
    async def send_message(chat_id: str, request: Request) -> dict[str, Any]:
        chat_id = _chat_id(chat_id)
        body = await _json(request)
        text = str(body.get("text", "")).strip()
        files = body.get("files") or []
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise WebError(400, "'files' is a list of the paths uploads answered with")
        if not text and not files:
            raise WebError(400, "'text' is required: the message to send")
        if len(text) > MAX_TEXT:
            raise WebError(413, f"a message is at most {MAX_TEXT} characters")
        try:
            return {"message_id": adapter.submit(chat_id, text, files)}
        except UnknownUpload as exc:
            raise WebError(
                400, f"{exc.args[0]} was not uploaded to this chat: upload it first"
            ) from None

    @app.get(api + "/chats/{chat_id}/sent/{file_id}")
    async def sent_file(chat_id: str, file_id: str) -> Response:
        file = adapter.files.sent(_chat_id(chat_id), file_id)
        if file is None:
            raise WebError(404, "no such file in this chat (the page keeps the newest ones)")
        return Response(
            file.data,
            media_type=file.mime,
            headers={"Content-Disposition": f'inline; filename="{file.name}"'},
        )

    @app.get(api + "/chats/{chat_id}/events")
    async def events(chat_id: str, request: Request, after: int = -1) -> StreamingResponse:
        chat_id = _chat_id(chat_id)
        start = _event_id(request.headers.get("last-event-id", ""), after)
        if start < 0:
            start = adapter.events.last_id(chat_id)
        return StreamingResponse(
            adapter.events.stream(chat_id, start),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    @app.put(api + "/chats/{chat_id}/files/{name}")
    async def upload(chat_id: str, name: str, request: Request) -> dict[str, Any]:
        _chat_id(chat_id)
        if not SAFE_NAME.match(name) or ".." in name:
            raise WebError(400, "a file name is letters, digits, spaces, '.', '_' or '-'")
        limit = int(adapter.settings.max_upload_mb * 1024 * 1024)
        folder, handle, stored = _create_upload(adapter.cwd, name)
        written = 0
        try:
            with handle:
                async for chunk in request.stream():
                    written += len(chunk)
                    if written > limit:
                        raise WebError(
                            413, f"files are at most {adapter.settings.max_upload_mb:g} MB"
                        )
                    handle.write(chunk)
        except BaseException:  # a refused or cut upload leaves no partial file behind
            _discard(folder, stored)
            raise
        path = str(folder / stored)
        adapter.files.uploaded(chat_id, path, name, request.headers.get("content-type"), written)
        return {"path": path, "bytes": written}

    @app.get(api + "/dashboard")
    async def dashboard(days: int = 30) -> dict[str, Any]:
        since = time.time() - max(1, min(days, 3650)) * 86400
        store = adapter.store()
        return {
            "days": days,
            "total": store.report(reports.usage_total, since=since).to_dict(),
            "by_day": [r.to_dict() for r in store.report(reports.usage_by, "day", since=since)],
            "by_model": [r.to_dict() for r in store.report(reports.usage_by, "model", since=since)],
            "by_source": [
                r.to_dict() for r in store.report(reports.usage_by, "source", since=since)
            ],
            "sessions_by_source": store.report(reports.sessions_by_source),
            "gateway": adapter.platform_health(),
        }

    add_memory_routes(app, adapter, api)


def add_memory_routes(app: FastAPI, adapter: WebBackend, api: str) -> None:

    def memory() -> Any:
        from herald.config import HeraldHome, load_config
        from herald.memory import BuiltinMemory

        home = HeraldHome(adapter.home_root)
        return BuiltinMemory(home, load_config(home.config_path).memory)

    @app.get(api + "/memory")
    async def read_memory() -> dict[str, Any]:
        mem = memory()
        return {
            target: {
                "entries": [adapter.redact(e) for e in mem.entries(target)],
                "limit": mem.limit(target),
            }
            for target in ("memory", "user")
        }

    @app.post(api + "/memory/{target}")
    async def write_memory(target: str, request: Request) -> dict[str, Any]:
        if target not in ("memory", "user"):
            raise WebError(404, "memory targets are 'memory' (MEMORY.md) and 'user' (USER.md)")
        body = await _json(request)
        action = body.get("action")
        content = str(body.get("content", ""))
        old = str(body.get("old_text", ""))
        mem = memory()
        if action == "add":
            result = mem.add(target, content)
        elif action == "replace":
            result = mem.replace(target, old, content)
        elif action == "remove":
            result = mem.remove(target, old)
        else:
            raise WebError(400, "'action' must be add, replace or remove")
        payload = result.to_dict()
        if not payload.get("success"):
            raise WebError(400, str(payload.get("error") or payload))
        return payload

    @app.get(api + "/skills")
    async def list_skills() -> dict[str, Any]:
        library = _skills(adapter)
        usage = library.usage.all()
        return {
            "skills": [
                {
                    "name": s.name,
                    "description": s.description,
                    "source": s.source,
                    "category": s.category,
                    "views": usage.get(s.name).views if s.name in usage else 0,
                    "uses": usage.get(s.name).uses if s.name in usage else 0,
                }
                for s in library.skills()
            ]
        }

    @app.get(api + "/skills/{name}")
    async def view_skill(name: str) -> dict[str, Any]:
        skill = _skills(adapter).get(name)
        if skill is None:
            raise WebError(404, f"no skill named {name!r}")
        return {"name": skill.name, "description": skill.description, "body": skill.body}


def _skills(adapter: WebBackend) -> Any:
    from herald.config import HeraldHome, load_config
    from herald.skills import SkillLibrary

    home = HeraldHome(adapter.home_root)
    return SkillLibrary(home, load_config(home.config_path))


def session_status(adapter: WebBackend, session_id: str) -> dict[str, Any] | None:
    record = adapter.store().get_session(session_id)
    if record is None:
        return None
    total = adapter.store().report(reports.usage_total, session_id=session_id)
    return {
        "model": record.model,
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "api_calls": record.api_calls,
        "cost_usd": record.estimated_cost_usd,
        "cache_hit_rate": round(total.cache_hit_rate, 4),
    }


async def _json(request: Request) -> dict[str, Any]:
    import json

    raw = await request.body()
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise WebError(400, "the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise WebError(400, "the body must be a JSON object")
    return body


def _create_upload(folder: Path, name: str) -> tuple[Path, BinaryIO, str]:
    """A new file for an upload named `name` (or `name-1`, `name-2` ... when taken)."""
    try:
        handle, stored = create_inbound_file(folder, name)
    except InboxNameError as exc:
        raise WebError(409, str(exc)) from None
    return folder, handle, stored


_discard = discard_inbound_file


def _event_id(header: str, after: int) -> int:
    """Where an event stream resumes: the Last-Event-ID header, else `after`."""
    header = header.strip()
    if not header:
        return after
    # str.isdigit() accepts "²" and other digits int() refuses, hence the ASCII check.
    if not (header.isascii() and header.isdigit()) or len(header) > 18:
        raise WebError(400, "Last-Event-ID must be the number of an event this stream sent")
    return int(header)


__all__ = ["add_data_routes", "chat_key", "transcript"]
