"""A photo and a voice note in the web chat, in real headless Chromium (issue 35): the
person attaches a photo with the upload button and asks about it, then attaches a
voice note and sends it alone; the transcript is their message in the chat and the spoken reply is an
audio player the page's content policy lets load. Screenshots land in
tests/artifacts/screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from test_web_browser import CHROMIUM, BackgroundGateway, browser, shot  # noqa: F401

from herald.gateway.platforms.web import create_token
from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply
from herald.testing.homes import fake_model_config, make_home, merge

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt install chromium)"),
]


def answer(request: RecordedRequest) -> Reply:
    content = request.body["messages"][-1]["content"]
    if isinstance(content, list) and any(p.get("type") == "image_url" for p in content):
        return Reply.text("I see a **yellow** square.")
    if "weather" in str(content):
        return Reply.text("Sunny all day.")
    return Reply.text("I did not get a picture.")


def test_a_person_sends_a_photo_and_a_voice_note(
    tmp_path: Path,
    fake_llm: FakeLLMServer,
    browser: Any,  # noqa: F811 (the fixture from test_web_browser)
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    config = merge(
        fake_model_config(fake_llm, name="gpt-4o-mini"),  # a model that sees images
        {
            "gateway": {
                "cwd": str(workdir),
                "status_edit_interval": 0.0,
                "platforms": {"web": {"enabled": True, "port": 0}},
            }
        },
    )
    settings = make_home(tmp_path / "home", config)
    token = create_token(settings.home.root)
    fake_llm.set_handler(answer)
    fake_llm.audio.transcript = "what is the weather tomorrow"
    photo = tmp_path / "square.png"
    Image.new("RGB", (120, 120), "yellow").save(photo)
    note = tmp_path / "note.ogg"
    note.write_bytes(b"OggS fake voice note")
    gateway = BackgroundGateway(settings).start()
    try:
        page = browser.new_context(viewport={"width": 1000, "height": 760}).new_page()
        played: list[Any] = []
        page.on("response", lambda r: played.append(r) if "/sent/" in r.url else None)
        page.goto(gateway.url)
        page.fill("#token", token)
        page.click("#login-button")
        page.wait_for_selector(".empty")

        page.set_input_files("#upload", str(photo))
        page.wait_for_selector("#attached .chip:has-text('square.png')")
        page.fill("#input", "what is in this picture?")
        page.keyboard.press("Enter")
        page.wait_for_selector(".msg.assistant strong:text('yellow')")
        assert "square.png" in page.locator(".msg.user").first.inner_text()
        assert page.locator("#attached .chip").count() == 0

        page.set_input_files("#upload", str(note))
        page.wait_for_selector("#attached .chip:has-text('note.ogg')")
        page.click("#send")
        page.wait_for_selector(".msg.assistant:has-text('Sunny all day.')")
        # the transcript is the person's message in the chat
        page.wait_for_selector(".msg.user:has-text('what is the weather tomorrow')")
        page.wait_for_selector(".file-out audio")
        page.wait_for_function("document.querySelector('.file-out audio').networkState !== 0")
        shot(page, "media")
        assert page.locator(".file-out").inner_text().startswith("🔊 spoken reply")
        page.wait_for_function("() => true")  # let the player's request finish
        assert any(r.status == 200 for r in played), [r.status for r in played]
    finally:
        gateway.stop()
