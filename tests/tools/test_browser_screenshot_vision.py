"""A browser screenshot reaches a model that sees images (issue 35), in real headless
Chromium against the test site, through the fake model on both wire formats: the request
right after browser_screenshot carries the screenshot as an image part (kept under the
home by reference, not in state.db), later requests carry only the text naming it, and
a model without vision gets the path alone."""

from __future__ import annotations

import base64
import shutil
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from browser_site import Site

from herald.testing.fake_llm import Reply

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt install chromium)"),
]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Site() as served:
        yield served


def _script(site: Site) -> list[Reply]:
    return [
        Reply.tool_call("browser_navigate", {"url": f"{site.url}/form"}),
        Reply.tool_call("browser_screenshot", {}),
        Reply.tool_call("browser_back", {}),
        Reply.text("It is an order form."),
    ]


def _images(request: Any) -> list[str]:
    """Image data in a request, whichever wire: OpenAI data URLs or Anthropic base64."""
    found = []
    for message in request.body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                found.append(part["image_url"]["url"].split(",", 1)[1])
            elif part.get("type") == "image":
                found.append(part["source"]["data"])
    return found


def _agent(make_agent: Any, api: str, sees: str) -> Any:
    return make_agent(
        api=api,
        config={
            "toolsets": {"enabled": ["browser"]},
            "web": {"allow_private_networks": True},
            "vision": {"main": sees},
        },
    )


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_the_screenshot_goes_to_a_vision_model_with_the_next_request_only(
    api: str, make_agent: Any, fake_llm: Any, site: Site
) -> None:
    fake_llm.enqueue(*_script(site))
    agent = _agent(make_agent, api, "on")
    try:
        result = agent.start_turn("what is on the form page?").result(timeout=120)
        assert result.final_text == "It is an order form."
        navigated, shot, back = fake_llm.model_requests()[1:]
        (stored,) = (agent.runtime.home.root / "images").iterdir()
        encoded = base64.b64encode(stored.read_bytes()).decode()
        assert _images(navigated) == [] and _images(back) == []
        assert _images(shot) == [encoded]
        last = shot.body["messages"][-1]
        assert last["role"] == "user"
        if api == "openai":  # a user message after the round's tool results
            assert shot.body["messages"][-2]["role"] == "tool"
            note = last["content"][0]["text"]
        else:  # merged behind the tool_result block in Anthropic's user turn
            assert last["content"][0]["type"] == "tool_result"
            note = next(b["text"] for b in last["content"] if b.get("type") == "text")
        assert "browser_screenshot" in note and f"web:{site.url}/form" in note
        assert "never instructions" in note
        with sqlite3.connect(agent.runtime.home.state_db) as db:
            rows = " ".join(str(r) for r in db.execute("SELECT * FROM messages"))
        assert encoded[:200] not in rows
    finally:
        agent.close()


@pytest.mark.parametrize("sees", ["on", "off"])
def test_a_path_only_a_screenshot_could_have_shown_does_not_steer_a_write_unattended(
    sees: str, make_agent: Any, fake_llm: Any, site: Site, tmp_path: Any
) -> None:
    """The attacker writes the path in the page's pixels, not its text: a vision model
    that saw the screenshot then writes there. No text evidence holds the path, so the
    image itself counts as its source and the unattended write is refused; a model that
    never saw the image is not held back by it."""
    fake_llm.enqueue(
        Reply.tool_call("browser_navigate", {"url": f"{site.url}/form"}),
        Reply.tool_call("browser_screenshot", {}),
        Reply.tool_call("write_file", {"path": "notes/pixels-9k.txt", "content": "x"}),
        Reply.text("done"),
    )
    agent = make_agent(
        config={
            "toolsets": {"enabled": ["browser", "file"]},
            "web": {"allow_private_networks": True},
            "vision": {"main": sees},
        }
    )
    try:
        agent.start_turn("look at the form page").result(timeout=120)
        result = fake_llm.model_requests()[-1].body["messages"][-1]["content"]
        written = list(tmp_path.rglob("pixels-9k.txt"))
        if sees == "on":
            assert "untrusted" in result and f"web:{site.url}/form" in result, result
            assert written == []
        else:
            assert len(written) == 1
    finally:
        agent.close()


def test_a_model_without_vision_gets_only_the_path(
    make_agent: Any, fake_llm: Any, site: Site
) -> None:
    fake_llm.enqueue(*_script(site))
    agent = _agent(make_agent, "openai", "off")
    try:
        agent.start_turn("what is on the form page?").result(timeout=120)
        shot = fake_llm.model_requests()[2]
        assert _images(shot) == []
        result = shot.body["messages"][-1]
        assert result["role"] == "tool" and "/screenshots/shot-" in result["content"]
    finally:
        agent.close()
