"""The web chat in a real headless Chromium (Debian's package, driven by Playwright):
what a person sees when they log in, chat, approve, stop, search, read the dashboard
and use a phone. Screenshots land in tests/artifacts/screenshots (git-ignored)."""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herald.gateway.lifecycle import load_adapters
from herald.gateway.platforms.web import create_token
from herald.gateway.runner import GatewayRunner
from herald.testing.fake_llm import FakeLLMServer, FakeUsage, Reply
from herald.testing.homes import fake_model_config, make_home, merge

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt install chromium)"),
]


class BackgroundGateway:
    """A real GatewayRunner with the web adapter, on an event loop of its own thread."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.url = ""

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self.ready.set()
        self.loop.run_forever()

    async def _start(self) -> None:
        adapters, problems = load_adapters(self.settings)
        assert problems == []
        self.adapter = adapters[0]
        self.runner = GatewayRunner({"default": self.settings}, adapters)
        await self.adapter.connect(self.runner)
        self.url = self.adapter.url

    def start(self) -> BackgroundGateway:
        self.thread.start()
        assert self.ready.wait(30)
        return self

    def stop(self) -> None:
        async def down() -> None:
            await self.runner.shutdown(0, grace=5)
            await self.adapter.disconnect()

        asyncio.run_coroutine_threadsafe(down(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def site(tmp_path: Path, fake_llm: FakeLLMServer) -> Iterator[tuple[str, str, Path]]:
    workdir = tmp_path / "work"
    workdir.mkdir()
    config = merge(
        fake_model_config(fake_llm, name="gpt-4o-mini"),
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
    gateway = BackgroundGateway(settings).start()
    yield gateway.url, token, workdir
    gateway.stop()


@pytest.fixture
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


def test_a_person_uses_the_web_chat(site, browser, fake_llm: FakeLLMServer) -> None:
    url, token, workdir = site
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    requests: list[str] = []
    responses: list[Any] = []
    page.on("request", lambda r: requests.append(r.url))

    def on_response(response: Any) -> None:
        responses.append(response)

    page.on("response", on_response)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    # Log in: the chat page replaces the login form.
    page.goto(url)
    assert page.url.endswith("/login")
    shot(page, "login")
    page.fill("#token", token)
    page.click("#login-button")
    page.wait_for_selector("#composer")
    requests.clear()
    responses.clear()
    page.goto(url)  # weigh the chat page itself, loaded as a returning user would
    page.wait_for_selector(".empty")
    page.remove_listener("response", on_response)
    weight = sum(
        int(r.headers.get("content-length", 0))
        for r in responses
        if "event-stream" not in r.headers.get("content-type", "")
    )
    assert weight > 10_000  # the page, its script and its styles were all counted
    assert weight < 200_000, f"the chat page weighs {weight} bytes"
    origin = url.split("/", 3)[:3]
    assert all(r.split("/", 3)[:3] == origin for r in requests), requests

    # A streamed reply, rendered as Markdown with highlighted code.
    fake_llm.enqueue(
        Reply.text(
            "Hello! Here is **bold** text and code:\n\n```python\ndef greet():\n    return 'hi'\n```",
            chunk_size=6,
            usage=FakeUsage(20_000, 2_000, cache_read_tokens=10_000),
        )
    )
    page.fill("#input", "Say hello in the browser")
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant strong")
    assert page.inner_text(".msg.user") == "Say hello in the browser"
    assert "def greet" in page.inner_text(".msg.assistant pre.code")
    assert page.locator(".tok-keyword").count() >= 2
    page.wait_for_selector("#send:text('Send')")
    shot(page, "chat")

    # A dangerous command asks first; pressing the button runs it.
    (workdir / "build").mkdir()
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "rm -rf build"}),
        Reply.text("Removed the build folder."),
    )
    page.fill("#input", "clean the build folder")
    page.keyboard.press("Enter")
    page.wait_for_selector(".prompt-buttons button")
    assert "rm -rf build" in page.inner_text(".prompt-text")
    shot(page, "approval")
    page.click(".prompt-buttons button:text('Allow once')")
    page.wait_for_selector(".msg.assistant:has-text('Removed the build folder.')")
    assert not (workdir / "build").exists()
    page.wait_for_selector("details.tool-step")
    page.click("details.tool-step summary")
    assert "rm -rf build" in page.inner_text("details.tool-step .tool-args")

    # A long command is stopped with the Stop button.
    fake_llm.enqueue(Reply.tool_call("terminal", {"command": "sleep 30"}))
    page.fill("#input", "wait a long time")
    page.keyboard.press("Enter")
    page.wait_for_selector("#stop:visible")
    page.wait_for_selector(".msg.status")
    page.click("#stop")
    page.wait_for_selector("#stop", state="hidden", timeout=15_000)
    page.locator("details.tool-step summary").last.click()
    assert "interrupted" in page.locator("details.tool-step .tool-result").last.inner_text()

    # Markup in a reply stays text.
    fake_llm.enqueue(Reply.text('Look: <img src=x onerror="alert(1)"> <script>alert(2)</script>'))
    page.fill("#input", "show me html")
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant:has-text('Look:')")
    assert page.locator("#messages img, #messages script").count() == 0
    assert "<img" in page.inner_text("#messages")
    assert dialogs == []

    # A new chat, then search finds the first one by its content.
    page.click("#new-chat")
    page.fill("#search", "greet")
    page.wait_for_selector(".chat-snippet")
    page.click(".chat-link")
    page.wait_for_selector(".msg.user:has-text('Say hello in the browser')")

    # The dashboard shows what the turns cost.
    page.click("[data-tab=dashboard]")
    page.wait_for_selector(".card-value")
    spend = page.inner_text(".card")
    assert "$0.0" in spend and "$0.0000" not in spend, spend
    assert "gpt-4o-mini" in page.inner_text("#dash-models")
    shot(page, "dashboard")

    # The autonomous half has tabs of its own once it exists: jobs and the board.
    page.click("[data-tab=jobs]")
    page.wait_for_selector("#jobs-scheduler:has-text('scheduler')")
    page.click("[data-tab=board]")
    page.wait_for_selector(".board-column h3")
    assert page.locator(".board-column").count() == 7
    context.close()

    # On a phone the chat fits the screen: no horizontal scrolling.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    mobile = phone.new_page()
    mobile.goto(url + "login")
    mobile.fill("#token", token)
    mobile.click("#login-button")
    mobile.wait_for_selector("#composer")
    overflow = mobile.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    shot(mobile, "chat-phone")
    phone.close()
