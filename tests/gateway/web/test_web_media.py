"""Photos and voice notes in the web chat (issue 35), over HTTP through the real
`GatewayRunner`: an uploaded photo goes with the next message as an image part, an
uploaded audio file is transcribed and answered with a spoken reply the page can play,
and a message may carry only files its own chat uploaded."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from PIL import Image
from web_support import login, read_events

from herald.config import Settings
from herald.gateway.lifecycle import load_adapters
from herald.gateway.platforms.web import create_token
from herald.gateway.platforms.web.adapter import WebAdapter
from herald.gateway.runner import GatewayRunner
from herald.testing.fake_llm import FakeLLMServer, Reply

CHAT = "chat-media-0123"
OTHER = "chat-media-9999"


@pytest.fixture
async def web(
    gateway_settings: Callable[..., Settings], request: pytest.FixtureRequest
) -> AsyncIterator[tuple[WebAdapter, httpx.AsyncClient, str, Settings]]:
    extra = getattr(request, "param", {})
    settings = gateway_settings({"platforms": {"web": {"enabled": True, "port": 0}}}, extra=extra)
    token = create_token(settings.home.root)
    adapters, problems = load_adapters(settings)
    assert problems == []
    (adapter,) = adapters
    assert isinstance(adapter, WebAdapter)
    runner = GatewayRunner({"default": settings}, adapters)
    await adapter.connect(runner)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{adapter.port}", timeout=30) as client:
        csrf = await login(client, token)
        yield adapter, client, csrf, settings
    await runner.shutdown(0, grace=5)
    await adapter.disconnect()


async def upload(
    client: httpx.AsyncClient, csrf: str, chat: str, name: str, data: bytes, mime: str
) -> str:
    response = await client.put(
        f"/api/chats/{chat}/files/{name}",
        content=data,
        headers={"X-CSRF-Token": csrf, "Content-Type": mime},
    )
    assert response.status_code == 200, response.text
    return str(response.json()["path"])


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (30, 20), "green").save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize("web", [{"vision": {"main": "on"}}], indirect=True)
async def test_an_uploaded_photo_goes_with_the_next_message_as_an_image(
    web: Any, fake_llm: FakeLLMServer
) -> None:
    _adapter, client, csrf, settings = web
    fake_llm.enqueue(Reply.text("A green rectangle."))
    path = await upload(client, csrf, CHAT, "leaf.png", png(), "image/png")
    sent = await client.post(
        f"/api/chats/{CHAT}/messages",
        json={"text": "what is it?", "files": [path]},
        headers={"X-CSRF-Token": csrf},
    )
    assert sent.status_code == 200, sent.text
    events = await read_events(client, f"/api/chats/{CHAT}/events?after=0")
    turn = next(data for _, kind, data in events if kind == "turn")
    assert turn["files"] == ["leaf.png"]
    (request,) = fake_llm.model_requests()
    parts = request.body["messages"][-1]["content"]
    (stored,) = (settings.home.root / "images").iterdir()
    encoded = base64.b64encode(stored.read_bytes()).decode()
    assert parts[1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{encoded}"},
    }


async def test_an_uploaded_voice_note_is_transcribed_and_the_reply_plays_in_the_page(
    web: Any, fake_llm: FakeLLMServer
) -> None:
    _adapter, client, csrf, _settings = web
    fake_llm.audio.transcript = "what time is it"
    fake_llm.enqueue(Reply.text("Noon."))
    path = await upload(client, csrf, CHAT, "note.webm", b"\x1aE\xdf\xa3 webm", "audio/webm")
    sent = await client.post(
        f"/api/chats/{CHAT}/messages", json={"files": [path]}, headers={"X-CSRF-Token": csrf}
    )
    assert sent.status_code == 200, sent.text
    events = await read_events(client, f"/api/chats/{CHAT}/events?after=0")
    texts = [data.get("text") for _, kind, data in events if kind == "message"]
    assert texts[0] == "🎤 what time is it" and "Noon." in texts
    (spoken,) = [data for _, kind, data in events if kind == "file"]
    assert spoken["voice"] is True and spoken["mime"] == "audio/mpeg"
    audio = await client.get(spoken["url"])
    assert audio.status_code == 200 and audio.content == fake_llm.audio.speech
    assert audio.headers["content-type"] == "audio/mpeg"
    (request,) = fake_llm.model_requests()
    assert (request.last_user_text or "").startswith("what time is it")
    # another chat cannot fetch it, nor anyone not logged in
    assert (await client.get(spoken["url"].replace(CHAT, OTHER))).status_code == 404
    async with httpx.AsyncClient(base_url=str(client.base_url)) as stranger:
        assert (await stranger.get(spoken["url"])).status_code == 401


async def test_a_message_carries_only_files_its_own_chat_uploaded(
    web: Any, fake_llm: FakeLLMServer, workdir: Any
) -> None:
    _adapter, client, csrf, _settings = web
    elsewhere = await upload(client, csrf, OTHER, "other.png", png(), "image/png")
    for named in (elsewhere, "/etc/passwd", str(workdir / "other.png")):
        refused = await client.post(
            f"/api/chats/{CHAT}/messages",
            json={"text": "look", "files": [named]},
            headers={"X-CSRF-Token": csrf},
        )
        assert refused.status_code == 400
        assert "was not uploaded to this chat" in refused.json()["error"]
    bad = await client.post(
        f"/api/chats/{CHAT}/messages", json={"files": "x"}, headers={"X-CSRF-Token": csrf}
    )
    assert bad.status_code == 400
    assert fake_llm.model_requests() == []
