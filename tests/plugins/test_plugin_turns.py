"""Plugins inside real turns against the fake model: a plugin tool is called, a hook adds
context to the user message's API copy (never the system prompt), a plugin memory
provider recalls, and an installed entry-point plugin loads like a directory one."""

from __future__ import annotations

import json
from pathlib import Path

from plugin_support import install_entry_point_dist, write_plugin

from herald.testing.fake_llm import Reply

WEATHER = """
from herald.tools import tool

@tool(toolset="plugin-weather", parallel_safe=True)
def weather(ctx, city: str) -> str:
    \"\"\"The weather in a city.

    Args:
        city: the city name
    \"\"\"
    return f"sunny in {city}"

def register(ctx):
    ctx.register_tool(weather)
    ctx.register_hook("pre_llm_call", lambda user_text: f"the user wrote {len(user_text)} chars")
"""


def test_a_plugin_tool_is_called_and_a_hook_adds_context(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "weather", WEATHER, provides=["tools", "hooks"])
    fake_llm.enqueue(Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("It is sunny."))
    # Full schemas, to check where they go (by default plugin tools are deferred: below).
    agent = make_agent(
        config={"plugins": {"enabled": ["weather"]}, "toolsets": {"defer_external": False}}
    )
    result = agent.run_turn("weather in Oslo?")
    assert result.final_text == "It is sunny."
    first, second = fake_llm.model_requests()
    names = [t["function"]["name"] for t in first.tools]
    assert names[-1] == "weather"  # appended after the built-ins: their prefix never moves
    tool_message = [m for m in second.messages if m["role"] == "tool"][-1]
    assert tool_message["content"] == "sunny in Oslo"
    user = [m for m in first.messages if m["role"] == "user"][-1]["content"]
    assert "<plugin-context>\nthe user wrote 16 chars\n</plugin-context>" in user
    assert "plugin-context" not in first.system and "16 chars" not in first.system
    # The stored message is what the user typed; the context rode on the API copy only.
    from herald.toolbox import default_registry

    assert default_registry().get("weather") is None  # on this agent's overlay only
    stored = agent.store.get_messages(result.session_id)
    assert next(m for m in stored if m.role == "user").content == "weather in Oslo?"


def test_plugin_tools_are_deferred_by_default(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "weather", WEATHER, provides=["tools", "hooks"])
    fake_llm.enqueue(Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("It is sunny."))
    agent = make_agent(config={"plugins": {"enabled": ["weather"]}})
    assert agent.run_turn("weather in Oslo?").final_text == "It is sunny."
    first, second = fake_llm.model_requests()
    tools = {t["function"]["name"]: t["function"] for t in first.tools}
    assert "weather" not in tools and "weather" in tools["tool_search"]["description"]
    assert [t["function"]["name"] for t in second.tools][-1] == "weather"  # loaded by the call
    assert [m for m in second.messages if m["role"] == "tool"][-1]["content"] == "sunny in Oslo"


def test_plugins_not_enabled_do_not_load(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "weather", WEATHER)
    fake_llm.enqueue(Reply.text("ok"))
    make_agent().run_turn("hi")
    names = [t["function"]["name"] for t in fake_llm.model_requests()[0].tools]
    assert "weather" not in names


MEMORY = """
from herald.memory import MemoryProvider

class Notebook(MemoryProvider):
    name = "notebook"

    def initialize(self, *, home, config, secrets=None):
        self.path = home.root / "plugins" / ".data" / "notebook.txt"

    def prefetch(self, query):
        return "the user's cat is called Miso" if "cat" in query else ""

    def sync_turn(self, user, assistant):
        pass

def register(ctx):
    ctx.register_memory_provider("notebook", Notebook)
"""


def test_a_plugin_memory_provider_recalls(make_agent, fake_llm, tmp_path: Path):
    write_plugin(tmp_path / "home" / "plugins", "notebook", MEMORY, provides=["memory_provider"])
    fake_llm.enqueue(Reply.text("Miso!"))
    agent = make_agent(
        config={"plugins": {"enabled": ["notebook"]}, "memory": {"provider": "notebook"}}
    )
    agent.run_turn("what is my cat called?")
    user = fake_llm.model_requests()[0].messages[-1]["content"]
    assert "the user's cat is called Miso" in user
    assert "Miso" not in fake_llm.model_requests()[0].system


def test_two_memory_providers_only_the_chosen_one_is_active(make_agent, fake_llm, tmp_path):
    plugins = tmp_path / "home" / "plugins"
    write_plugin(plugins, "notebook", MEMORY)
    write_plugin(plugins, "other", MEMORY.replace('"notebook"', '"other"').replace("Miso", "Tom"))
    statuses: list[str] = []
    from herald.engine.callbacks import TurnCallbacks

    fake_llm.enqueue(Reply.text("Miso!"))
    agent = make_agent(
        config={"plugins": {"enabled": ["notebook", "other"]}, "memory": {"provider": "notebook"}},
        callbacks=TurnCallbacks(on_status=statuses.append),
    )
    agent.run_turn("what is my cat called?")
    user = fake_llm.model_requests()[0].messages[-1]["content"]
    assert "Miso" in user and "Tom" not in user
    said = " ".join(statuses)
    assert "'other'" in said and "memory.provider is 'notebook'" in said


INSTALLED = """
def shout(ctx, text: str) -> str:
    \"\"\"Upper-case some text.

    Args:
        text: what to shout
    \"\"\"
    return text.upper()

def register(ctx):
    ctx.register_tool(shout)
"""


def test_an_installed_entry_point_plugin_loads(make_agent, fake_llm, tmp_path: Path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    install_entry_point_dist(
        tmp_path / "site", "herald-shout", "shout", "herald_shout_fixture", INSTALLED
    )
    fake_llm.enqueue(Reply.tool_call("shout", {"text": "hey"}), Reply.text("done"))
    agent = make_agent(config={"plugins": {"enabled": ["shout"]}})
    agent.run_turn("shout hey")
    second = fake_llm.model_requests()[1]
    assert [m for m in second.messages if m["role"] == "tool"][-1]["content"] == "HEY"
    assert json.dumps(second.tools).count('"shout"') == 1


def test_an_installed_plugin_ships_its_manifest(make_agent, fake_llm, tmp_path: Path, monkeypatch):
    from herald.engine.callbacks import TurnCallbacks

    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    install_entry_point_dist(
        tmp_path / "site",
        "herald-needy",
        "needy",
        "herald_needy_fixture",
        INSTALLED,
        manifest={"name": "needy", "version": "2.0", "requires": {"python": ["nope-xyz>=1"]}},
    )
    statuses: list[str] = []
    fake_llm.enqueue(Reply.text("ok"))
    agent = make_agent(
        config={"plugins": {"enabled": ["needy"]}},
        callbacks=TurnCallbacks(on_status=statuses.append),
    )
    assert agent.run_turn("hi").final_text == "ok"
    [said] = [s for s in statuses if "'needy'" in s]
    assert "installed" in said and "from herald-needy 1.0.0" in said
    assert "missing Python packages: nope-xyz>=1; run: pip install 'nope-xyz>=1'" in said
