"""One end-to-end turn per capability of issue 35 (browser, vision, execute_code, voice)
against the fake LLM server, printed as the exchange: what the fake model asked for and
what came back to it. Everything but the model is real: headless Chromium on a page this
script serves, Pillow, a Python subprocess for execute_code, and the gateway with the
real python-telegram-bot client against the fake Bot API for the voice note.

Run: python bench/capabilities_e2e.py [--out report.md]
(the browser turn needs Debian's chromium and `herald[browser]`; it is skipped without)
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import shutil
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from herald.engine import Agent, AgentOptions, Humans
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply
from herald.testing.homes import fake_model_config, make_home, merge
from herald.toolbox import builtin_tools

OUT: list[str] = []


def say(line: str = "") -> None:
    print(line)
    OUT.append(line)


def short(value: Any, limit: int = 360) -> str:
    """A message's content for reading: base64 images as a size, long text cut."""
    if isinstance(value, list):
        return " + ".join(short(part, limit) for part in value)
    if isinstance(value, dict):
        if value.get("type") == "image_url":
            url = value["image_url"]["url"]
            return f"<image part {url.split(';', 1)[0][5:]}, {len(url):,} chars of base64>"
        if value.get("type") == "image":
            return f"<image block {value['source'].get('media_type')}>"
        if value.get("type") in ("text", "tool_result"):
            return short(value.get("text") or value.get("content"), limit)
        return json.dumps(value)[:limit]
    text = re.sub(r"\s+", " ", str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Scripted:
    """The fake model's answers in order, each printed beside what the request that
    got it carried since the model last spoke."""

    def __init__(self, server: FakeLLMServer, replies: list[Reply | Callable[..., Reply]]):
        self.replies = list(replies)
        self.n = 0
        server.set_handler(self)

    def __call__(self, request: RecordedRequest) -> Reply:
        self.n += 1
        messages = request.messages
        since = []
        for message in reversed(messages):
            since.insert(0, message)
            if message.get("role") == "assistant" or len(since) > 6:
                since = since[1:] if message.get("role") == "assistant" else since
                break
        tools = sorted(t["function"]["name"] for t in request.tools or [])
        say(f"- **request {self.n}** ({len(messages)} messages, {len(tools)} tools offered)")
        for message in since:
            if message.get("role") == "system":
                continue
            say(f"  - came back as `{message.get('role')}`: {short(message.get('content'))}")
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(request)
        if reply.tool_calls:
            for call in reply.tool_calls:
                args = (
                    call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(call.arguments)
                )
                say(f"  - **the fake model asked**: `{call.name}({short(args, 300)})`")
        else:
            say(f"  - **the fake model answered**: {short(reply.text)}")
        return reply


def open_agent(root: Path, server: FakeLLMServer, config: dict[str, Any]) -> Agent:
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    base = fake_model_config(server, context_length=128_000)
    settings = make_home(root / "home", merge(base, config))
    store = StateStore(settings.home.state_db)
    return Agent.open(
        settings, store, source="cli", tools=builtin_tools(), options=AgentOptions(cwd=str(work))
    )


def png(colour: str) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 48), colour).save(out, format="PNG")
    return out.getvalue()


# ---- browser ----------------------------------------------------------------------------


class Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = (
            b"<!doctype html><title>Orders</title><h1>Open orders</h1>"
            b"<table><tr><td>#1042</td><td>3 chairs</td><td>shipped</td></tr>"
            b"<tr><td>#1043</td><td>1 desk</td><td>waiting</td></tr></table>"
            b"<button>Refresh</button>"
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def browser_turn(root: Path) -> None:
    say("## Browser (`browser` toolset, Chromium, a vision model)")
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        say("_skipped: no chromium on this machine_")
        return
    site = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{site.server_address[1]}/orders"
    with FakeLLMServer() as server:
        Scripted(
            server,
            [
                Reply.tool_call("browser_navigate", {"url": url}),
                Reply.tool_call("browser_snapshot", {}),
                Reply.tool_call("browser_screenshot", {}),
                Reply.text("Two open orders: #1042 (shipped) and #1043 (waiting)."),
            ],
        )
        agent = open_agent(
            root,
            server,
            {
                "toolsets": {"enabled": ["browser"]},
                "web": {"allow_private_networks": True},
                "vision": {"main": "on"},
            },
        )
        try:
            result = agent.start_turn("Which orders are open on my shop page?").result(120)
            say(f"\nFinal reply: **{result.final_text}** (exit: {result.exit_reason.value})")
        finally:
            agent.close()
    site.shutdown()


# ---- vision -------------------------------------------------------------------------------


def vision_turns(root: Path) -> None:
    say("## Vision (`--image`'s path: an image part; a model without vision: vision_analyze)")
    root.mkdir(parents=True)
    photo = root / "label.png"
    photo.write_bytes(png("red"))
    with FakeLLMServer() as server:
        say("\n### A model that sees images")
        Scripted(server, [Reply.text("A plain red rectangle, 64×48.")])
        agent = open_agent(root / "sees", server, {"vision": {"main": "on"}})
        try:
            ref = agent.attach_image(photo)
            say(f"(attached: {ref.path}, {ref.media_type}, {ref.width}×{ref.height})")
            result = agent.start_turn("What is in this picture?", images=[ref]).result(60)
            say(f"\nFinal reply: **{result.final_text}**")
        finally:
            agent.close()

        say("\n### A model without vision, the auxiliary model looks")

        def auxiliary(request: RecordedRequest) -> Reply:
            return Reply.text("It shows a solid red rectangle and no text.")

        Scripted(
            server,
            [
                lambda r: Reply.tool_call(
                    "vision_analyze",
                    {"path": _attached_path(r), "question": "What is in it?"},
                ),
                auxiliary,  # the side call vision_analyze makes (carries the image)
                Reply.text("The picture is a red rectangle."),
            ],
        )
        agent = open_agent(
            root / "blind",
            server,
            {"vision": {"main": "off", "auxiliary": "on"}, "toolsets": {"enabled": ["vision"]}},
        )
        try:
            ref = agent.attach_image(photo)
            result = agent.start_turn("What is in this picture?", images=[ref]).result(60)
            say(f"\nFinal reply: **{result.final_text}**")
        finally:
            agent.close()


def _attached_path(request: RecordedRequest) -> str:
    text = str(request.messages[-1].get("content"))
    return text.split("[image attached: ", 1)[1].split(" (", 1)[0]


# ---- execute_code --------------------------------------------------------------------------


def execute_code_turn(root: Path) -> None:
    say("## execute_code (one script, many tool calls, one model round trip)")
    work = root / "work"
    work.mkdir(parents=True)
    for i in range(5):
        (work / f"note{i}.txt").write_text("todo: call the bank\n" if i % 2 else "all done\n")
    code = (
        "import herald_tools\n"
        "for i in range(5):\n"
        "    text = herald_tools.read_file(path=f'note{i}.txt')\n"
        "    if 'todo' in text:\n"
        "        print(f'note{i}.txt has a todo')\n"
    )
    asked: list[str] = []

    def human(prompt: Any) -> str:
        asked.append(prompt.command[:60])
        return "once"

    with FakeLLMServer() as server:
        Scripted(
            server,
            [
                Reply.tool_call("execute_code", {"code": code}),
                Reply.text("note1.txt and note3.txt still have todos."),
            ],
        )
        agent = open_agent(root, server, {"toolsets": {"enabled": ["execute_code", "file"]}})
        try:
            result = agent.start_turn(
                "Which of my notes still have a todo?", humans=Humans(approve=human)
            ).result(120)
            say(f"\n(the human was asked to approve the script: {short(asked)})")
            say(
                f"Final reply: **{result.final_text}** — {len(server.model_requests())} model "
                "requests for 5 read_file calls"
            )
        finally:
            agent.close()


# ---- voice (through the gateway, Telegram) -------------------------------------------------


async def gateway_turns(root: Path) -> None:
    say("## Through the gateway: a Telegram photo (vision) and a voice note (voice)")
    from herald.gateway.lifecycle import load_adapters, serve, served_settings
    from herald.gateway.runner import GatewayRunner
    from herald.testing.fake_telegram import FakeTelegramServer

    owner = 1001
    with FakeLLMServer() as server, FakeTelegramServer() as telegram:
        server.audio.transcript = "What is on my calendar tomorrow?"
        Scripted(
            server,
            [
                Reply.text("A red rectangle: the label is blank."),
                Reply.text("Dentist at 9 and the team lunch at 12."),
            ],
        )
        config = merge(
            fake_model_config(server, context_length=128_000),
            {
                "identities": {"owner": {"role": "owner", "accounts": [f"telegram:{owner}"]}},
                "vision": {"main": "on"},
                "gateway": {
                    "cwd": str(root / "work"),
                    "status_edit_interval": 0.0,
                    "drain_seconds": 0.0,
                    "platforms": {
                        "telegram": {
                            "enabled": True,
                            "token": "${TELEGRAM_BOT_TOKEN}",
                            "base_url": telegram.base_url,
                            "allowed_users": [str(owner)],
                        }
                    },
                },
            },
        )
        (root / "work").mkdir(parents=True)
        settings = make_home(root / "home", config, {"TELEGRAM_BOT_TOKEN": telegram.token})
        adapters, problems = load_adapters(settings)
        assert problems == [], problems
        runner = GatewayRunner(served_settings(settings), default_profile="default")
        stop = asyncio.Event()
        task = asyncio.ensure_future(serve(runner, adapters, home=settings.home, stop=stop))
        say("\n### A photo with a caption (vision.main: on)")
        telegram.send_user_message(owner, owner, "what does this label say?", photo_data=png("red"))
        await telegram.await_until(
            lambda: any("label is blank" in m.text for m in telegram.sent_messages(owner)), 30.0
        )
        say(f"- fetched from Telegram after authorization: {telegram.file_downloads}")
        say("\n### A voice note (voice.reply: auto)")
        say("(the owner sends a 3 s voice note in a private chat)")
        telegram.send_user_message(owner, owner, "", voice=b"OggS" + b"\0" * 12000)
        sent = await telegram.await_until(
            lambda: [m for m in telegram.sent_messages(owner) if m.voice is not None], 30.0
        )
        for record in server.audio_requests():
            say(f"- audio endpoint called: `POST {record.path}`")
        say("- what the chat shows, in order:")
        for message in telegram.sent_messages(owner)[-3:]:
            if message.voice is not None:
                say(f"  - a voice message (sendVoice, {len(message.voice.data)} bytes of audio)")
            elif not message.text.startswith("✓"):
                say(f"  - {short(message.text)}")
        assert sent
        stop.set()
        await asyncio.wait_for(task, 30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the exchange to this Markdown file")
    args = parser.parse_args()
    say("# Issue 35, end to end against the fake model")
    say("\nEach turn below ran for real; the lines are printed as the fake model is called.\n")
    with tempfile.TemporaryDirectory(prefix="herald-e2e-") as tmp:
        root = Path(tmp)
        browser_turn(root / "browser")
        say()
        vision_turns(root / "vision")
        say()
        execute_code_turn(root / "code")
        say()
        asyncio.run(gateway_turns(root / "gateway"))
    if args.out:
        Path(args.out).write_text("\n".join(OUT) + "\n")


if __name__ == "__main__":
    main()
