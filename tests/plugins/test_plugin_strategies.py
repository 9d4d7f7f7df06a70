"""Exclusive strategies from plugins, chosen in config: a context engine (context.engine)
and a model provider (a transport for a new API shape, model.api_mode); a plugin
cannot take a built-in's name. Also: project plugins, precedence, a toolset, the
plugin's own config section, storage and secrets, and the session/turn hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_support import write_plugin

from herald.engine.callbacks import TurnCallbacks
from herald.testing.fake_llm import Reply

ENGINE = """
from herald.context import CompressorEngine

class Tiny(CompressorEngine):
    name = "tiny"

def register(ctx):
    ctx.register_context_engine("tiny", Tiny)
    ctx.register_context_engine("compressor", Tiny)
"""


def test_a_plugin_context_engine_is_chosen_by_config(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "tinyctx", ENGINE, provides=["context_engine"])
    statuses: list[str] = []
    fake_llm.enqueue(Reply.text("ok"))
    agent = make_agent(
        config={"plugins": {"enabled": ["tinyctx"]}, "context": {"engine": "tiny"}},
        callbacks=TurnCallbacks(on_status=statuses.append),
    )
    assert type(agent.context_engine).__name__ == "Tiny"
    assert agent.run_turn("hi").final_text == "ok"
    assert any(
        "context engine 'compressor' of plugin 'tinyctx' refused: Herald has a built-in" in s
        for s in statuses
    )
    fake_llm.enqueue(Reply.text("still ok"))
    plain = make_agent(config={"plugins": {"enabled": ["tinyctx"]}})
    assert type(plain.context_engine).__name__ == "CompressorEngine"  # the built-in stays
    from herald.context import UnknownContextEngineError

    with pytest.raises(UnknownContextEngineError, match="unknown context engine 'tiny'"):
        make_agent(config={"context": {"engine": "tiny"}})  # without the plugin: not offered


TRANSPORT = """
from herald.providers.openai_chat import OpenAIChatTransport

class Tagged(OpenAIChatTransport):
    api_mode = "tagged_chat"

    def build_request(self, messages, tools, settings):
        request = super().build_request(messages, tools, settings)
        request["user"] = "sent-by-plugin-transport"
        return request

def make(endpoint, api_key, *, timeout):
    return Tagged(provider=endpoint.provider, base_url=endpoint.base_url, api_key=api_key,
                  timeout=timeout)

def register(ctx):
    ctx.register_model_provider("tagged_chat", make)
"""


def test_a_plugin_model_provider_carries_the_turn(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "tagged", TRANSPORT, provides=["model_provider"])
    fake_llm.enqueue(Reply.text("through the plugin"))
    agent = make_agent(
        config={
            "plugins": {"enabled": ["tagged"]},
            "model": {"provider": "custom", "api_mode": "tagged_chat", "api_key_env": None},
        }
    )
    assert agent.run_turn("hi").final_text == "through the plugin"
    assert fake_llm.model_requests()[0].body["user"] == "sent-by-plugin-transport"


TOOLSET = """
from pydantic import BaseModel

class CONFIG_SCHEMA(BaseModel):
    greeting: str = "hello"
    times: int = 1

def greet(ctx, name: str) -> str:
    \"\"\"Greet someone.

    Args:
        name: who
    \"\"\"
    return STATE["greeting"] + " " + name

def farewell(ctx, name: str) -> str:
    \"\"\"Say goodbye.

    Args:
        name: who
    \"\"\"
    return "bye " + name

STATE = {}

def register(ctx):
    STATE["greeting"] = ctx.config.greeting
    (ctx.storage / "token.txt").write_text(ctx.secrets("GREETER_TOKEN") or "none")
    ctx.register_toolset("greetings", [greet, farewell])
    log = ctx.storage / "events.jsonl"
    def record(event):
        def hook(**payload):
            with open(log, "a") as fh:
                fh.write(json.dumps({"event": event, **{k: payload[k] for k in sorted(payload)
                                     if isinstance(payload[k], (str, int, bool))}}) + "\\n")
        return hook
    for event in ("on_session_start", "post_llm_call", "post_tool_call", "on_turn_complete",
                  "on_session_end"):
        ctx.register_hook(event, record(event))

import json
"""


def test_toolset_config_storage_secrets_and_session_hooks(make_agent, fake_llm, tmp_path):
    write_plugin(tmp_path / "home" / "plugins", "greeter", TOOLSET)
    fake_llm.enqueue(Reply.tool_call("greet", {"name": "Ada"}), Reply.text("done"))
    agent = make_agent(
        config={
            "plugins": {"enabled": ["greeter"], "config": {"greeter": {"greeting": "ahoy"}}},
            "toolsets": {"defer_external": False},  # the full schemas are what is checked
        },
        env={"GREETER_TOKEN": "tok-123"},
    )
    result = agent.run_turn("greet Ada")
    second = fake_llm.model_requests()[1]
    assert [m for m in second.messages if m["role"] == "tool"][-1]["content"] == "ahoy Ada"
    assert {"greet", "farewell"} <= {t["function"]["name"] for t in second.tools}
    assert agent.registry.get("farewell").toolset == "greetings"
    storage = tmp_path / "home" / "plugins" / ".data" / "greeter"
    assert (storage / "token.txt").read_text() == "tok-123"
    agent.close()
    events = [json.loads(x) for x in (storage / "events.jsonl").read_text().splitlines()]
    names = [e["event"] for e in events]
    assert names == [
        "on_session_start",
        "post_llm_call",
        "post_tool_call",
        "post_llm_call",
        "on_turn_complete",
        "on_session_end",
    ]
    assert events[0]["session_id"] == result.session_id
    assert events[2]["name"] == "greet" and events[2]["result"] == "ahoy Ada"
    assert events[4]["exit_reason"] == "text_response" and events[4]["final_text"] == "done"


def test_a_toolset_can_be_hidden_and_a_bad_config_section_disables(make_agent, fake_llm, tmp_path):
    write_plugin(tmp_path / "home" / "plugins", "greeter", TOOLSET)
    fake_llm.enqueue(Reply.text("ok"))
    hidden = make_agent(
        config={"plugins": {"enabled": ["greeter"]}, "toolsets": {"disabled": ["greetings"]}}
    )
    hidden.run_turn("hi")
    assert "greet" not in {t["function"]["name"] for t in fake_llm.model_requests()[0].tools}
    statuses: list[str] = []
    fake_llm.enqueue(Reply.text("ok"))
    make_agent(
        config={"plugins": {"enabled": ["greeter"], "config": {"greeter": {"times": "x"}}}},
        callbacks=TurnCallbacks(on_status=statuses.append),
    ).run_turn("hi")
    assert any("plugins.config.greeter is invalid" in s and "times" in s for s in statuses)


def test_project_plugins_need_opt_in_and_win_over_user_ones(make_agent, fake_llm, tmp_path):
    code = 'def who(ctx) -> str:\n    """Which copy."""\n    return "%s"\n' + (
        "def register(ctx):\n    ctx.register_tool(who)\n"
    )
    write_plugin(tmp_path / "home" / "plugins", "which", code % "user")
    work = tmp_path / "work"
    write_plugin(work / ".herald" / "plugins", "which", code % "project")
    for project, expected in ((False, "user"), (True, "project")):
        fake_llm.reset()
        fake_llm.enqueue(Reply.tool_call("who", {}), Reply.text("ok"))
        make_agent(
            config={"plugins": {"enabled": ["which"], "project": project}}, cwd=str(work)
        ).run_turn("which?")
        tool = [m for m in fake_llm.model_requests()[1].messages if m["role"] == "tool"][-1]
        assert tool["content"] == expected


COMPRESS = """
def register(ctx):
    log = ctx.storage / "compressed.txt"
    ctx.register_hook(
        "on_compress", lambda archived: log.write_text(str(archived)), priority=1
    )
"""


def test_on_compress_sees_the_compression(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "watcher", COMPRESS)
    rounds = {"n": 0}

    def handler(req):
        if req.system and req.system.startswith("You compress the history"):
            return Reply.text("## Goal\nsummary")
        if req.messages[-1]["role"] == "user":
            rounds["n"] = 0
        if rounds["n"] < 6:
            rounds["n"] += 1
            todo = {"id": str(rounds["n"]), "content": "w" * 1500, "status": "completed"}
            return Reply.tool_call("todo", {"todos": [todo]})
        return Reply.text("done")

    fake_llm.set_handler(handler)
    agent = make_agent(config={"plugins": {"enabled": ["watcher"]}})
    agent.run_turn("six steps")
    assert agent.compress_now()
    archived = int(
        (tmp_path / "home" / "plugins" / ".data" / "watcher" / "compressed.txt").read_text()
    )
    assert archived > 0
