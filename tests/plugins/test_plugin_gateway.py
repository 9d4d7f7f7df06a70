"""A plugin platform receives and sends through the real gateway runner; a plugin slash
command answers there; the gateway's message hooks see both directions."""

from __future__ import annotations

import json
from pathlib import Path

from plugin_support import write_plugin

from herald.gateway.lifecycle import load_adapters
from herald.gateway.runner import GatewayRunner
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge

PIGEON = """
import json
from herald.gateway.testing import LoopbackAdapter

class Pigeon(LoopbackAdapter):
    def __init__(self, greeting):
        super().__init__("pigeon")
        self.greeting = greeting

def register(ctx):
    log = ctx.storage / "seen.jsonl"

    def remember(**event):
        with open(log, "a") as fh:
            fh.write(json.dumps(event) + "\\n")

    ctx.register_platform("pigeon", lambda config: Pigeon(config.get("greeting", "coo")))
    ctx.register_slash_command("ping", lambda arg: f"pong {arg}".strip(), help="answer pong")
    ctx.register_slash_command("where", lambda session_id: f"session {session_id}")
    ctx.register_hook("on_message_received", lambda text, platform: remember(dir="in", text=text))
    ctx.register_hook("on_message_sent", lambda text: remember(dir="out", text=text))
"""


async def test_a_plugin_platform_receives_and_sends(tmp_path: Path, fake_llm) -> None:
    write_plugin(
        tmp_path / "home" / "plugins",
        "pigeon",
        PIGEON,
        provides=["platforms", "slash_commands", "hooks"],
    )
    work = tmp_path / "work"
    work.mkdir()
    config = merge(
        fake_model_config(fake_llm),
        {
            "gateway": {
                "cwd": str(work),
                "allowed_users": {"pigeon": ["user-1"]},
                "status_edit_interval": 0.0,
            },
            "plugins": {"enabled": ["pigeon"], "config": {"pigeon": {"greeting": "hi"}}},
        },
    )
    settings = make_home(tmp_path / "home", config)
    adapters, problems = load_adapters(settings)
    assert problems == []
    [pigeon] = [a for a in adapters if a.name == "pigeon"]
    assert pigeon.greeting == "hi"  # its plugins.config section reached the factory
    runner = GatewayRunner({"default": settings}, adapters)
    await pigeon.connect(runner)
    try:
        fake_llm.enqueue(Reply.text("Hello over pigeon."))
        result = await pigeon.inject("hi bird")
        assert result.status == "replied" and pigeon.texts() == ["Hello over pigeon."]
        ping = await pigeon.inject("/ping now")
        assert ping.text == "pong now" and pigeon.texts()[-1] == "pong now"
        where = await pigeon.inject("/where")
        assert where.text == f"session {result.session_id}"
        helped = await pigeon.inject("/help")
        assert "/ping [ARG]" in helped.text and "answer pong" in helped.text
    finally:
        await runner.shutdown(0, grace=5)
    seen = [
        json.loads(line)
        for line in (settings.home.plugins_dir / ".data" / "pigeon" / "seen.jsonl")
        .read_text()
        .splitlines()
    ]
    assert {"dir": "in", "text": "hi bird"} in seen
    assert {"dir": "out", "text": "Hello over pigeon."} in seen
    assert {"dir": "out", "text": "pong now"} in seen
