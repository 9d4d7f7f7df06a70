"""Toolsets: resolution, config enabled/disabled, availability, the definitions cache."""

from __future__ import annotations

import pytest

from herald.config import HeraldConfig, Secrets
from herald.tools import (
    BUILTIN_TOOLSETS,
    CheckCache,
    DefinitionsCache,
    ToolRegistry,
    Toolset,
    ToolsetError,
    available_tool_names,
    resolve_toolset,
    select_tools,
)

BUILTIN_TOOLS = (
    "todo",
    "clarify",
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "terminal",
    "process",
    "web_search",
    "web_extract",
)
TOOLSET_OF = {
    "todo": "core",
    "clarify": "clarify",
    "read_file": "file",
    "write_file": "file",
    "patch": "file",
    "search_files": "file",
    "terminal": "terminal",
    "process": "terminal",
    "web_search": "web",
    "web_extract": "web",
}


def _register(reg: ToolRegistry, name: str, toolset: str, **kw) -> None:
    reg.register(name, toolset, {"description": name}, lambda a, c: name, **kw)


@pytest.fixture
def reg() -> ToolRegistry:
    r = ToolRegistry()
    for name in BUILTIN_TOOLS:
        _register(r, name, TOOLSET_OF[name])
    return r


def config(**toolsets) -> HeraldConfig:
    return HeraldConfig.model_validate({"toolsets": toolsets})


def test_cli_bundle_is_core_then_file_terminal_web(reg):
    assert resolve_toolset(["herald-cli"], reg) == [
        "todo",
        "clarify",
        "read_file",
        "write_file",
        "patch",
        "search_files",
        "terminal",
        "process",
        "web_search",
        "web_extract",
    ]
    assert resolve_toolset(["herald-api"], reg) == resolve_toolset(["herald-cron"], reg)


def test_webhook_bundle_has_no_side_effects_or_file_access(reg):
    tools = resolve_toolset(["herald-webhook"], reg)
    # No clarify either: nobody is there to answer a webhook turn's question.
    assert set(tools) == {"todo", "web_search", "web_extract"}


def test_core_is_in_every_surface_bundle(reg):
    core = set(resolve_toolset(["core"], reg))
    assert core == {"todo", "clarify"}  # memory is listed but not registered in this registry
    for bundle in ("herald-cli", "herald-api", "herald-cron"):
        assert core <= set(resolve_toolset([bundle], reg))
    # The webhook bundle gets only the side-effect-free part of core.
    assert set(resolve_toolset(["herald-webhook"], reg)) & core == {"todo"}


def test_registered_toolsets_exist_without_a_table_entry(reg):
    _register(reg, "lookup", "plugin-x")
    assert resolve_toolset(["plugin-x"], reg) == ["lookup"]
    assert resolve_toolset(["herald-cli"], reg, enabled=["plugin-x"])[-1] == "lookup"


def test_aliases_all_and_star(reg):
    _register(reg, "extra", "elsewhere")
    assert resolve_toolset(["all"], reg) == reg.names()
    assert resolve_toolset(["*"], reg) == reg.names()


def test_includes_resolve_recursively_and_cycles_end_with_the_union(reg):
    custom = {
        "a": Toolset("a", tools=("todo",), includes=("b",)),
        "b": Toolset("b", tools=("read_file",), includes=("c",)),
        "c": Toolset("c", tools=("web_search",), includes=("a",)),
    }
    assert resolve_toolset(["a"], reg, custom=custom) == ["todo", "read_file", "web_search"]
    assert resolve_toolset(["c"], reg, custom=custom) == ["web_search", "todo", "read_file"]


def test_custom_toolsets_from_config(reg):
    cfg = config(
        custom={"reader": {"tools": ["read_file"], "includes": ["web"]}}, enabled=["reader"]
    )
    names = available_tool_names("herald-webhook", cfg, reg)
    assert names == ["todo", "web_search", "web_extract", "read_file"]
    with pytest.raises(ToolsetError, match="built-in"):
        available_tool_names("core", config(custom={"file": {"tools": ["todo"]}}), reg)


def test_enabled_adds_and_disabled_removes(reg):
    assert resolve_toolset(["herald-webhook"], reg, enabled=["file"]) == [
        "todo",
        "web_search",
        "web_extract",
        "read_file",
        "write_file",
        "patch",
        "search_files",
    ]
    tools = resolve_toolset(["herald-cli"], reg, disabled=["terminal", "web_extract"])
    assert "terminal" not in tools and "process" not in tools and "web_extract" not in tools
    assert "web_search" in tools


def test_disabling_a_bundle_removes_only_its_non_core_tools(reg):
    assert resolve_toolset(["herald-cli"], reg, disabled=["herald-cli"]) == ["todo", "clarify"]
    assert resolve_toolset(["herald-cli"], reg, disabled=["all"]) == ["todo", "clarify"]
    # naming core itself, or a core tool, does remove it
    assert "todo" not in resolve_toolset(["herald-cli"], reg, disabled=["core"])
    assert "clarify" not in resolve_toolset(["herald-cli"], reg, disabled=["clarify"])


def test_unknown_toolset_is_a_clear_error(reg):
    with pytest.raises(ToolsetError) as err:
        resolve_toolset(["herald-cli"], reg, enabled=["fiel"])
    message = str(err.value)
    assert "'fiel'" in message and "toolsets.enabled" in message
    for known in ("core", "file", "herald-cli", "herald-webhook", "web"):
        assert known in message
    with pytest.raises(ToolsetError, match=r"toolsets\.disabled"):
        resolve_toolset(["herald-cli"], reg, disabled=["nope"])
    with pytest.raises(ToolsetError, match="included by toolset 'x'"):
        resolve_toolset(["x"], reg, custom={"x": Toolset("x", includes=("ghost",))})


def test_a_known_but_unregistered_tool_name_is_not_an_error(reg):
    # "memory" is part of core before any memory tool exists
    assert "memory" not in resolve_toolset(["herald-cli"], reg, disabled=["memory"])


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_check_fn_results_are_cached_for_30_seconds(reg):
    clock = FakeClock()
    cache = CheckCache(clock=clock)
    answers = [True]
    calls: list[int] = []

    def check(ctx) -> bool:
        assert ctx.config is cfg  # the profile's own config reaches the check
        calls.append(1)
        return answers[-1]

    _register(reg, "gpu", "extras", check_fn=check)
    cfg = config(enabled=["extras"])
    assert "gpu" in available_tool_names("core", cfg, reg, cache=cache)
    answers.append(False)
    clock.now += 29.9
    assert "gpu" in available_tool_names("core", cfg, reg, cache=cache)
    assert len(calls) == 1
    clock.now += 0.2
    assert "gpu" not in available_tool_names("core", cfg, reg, cache=cache)
    assert len(calls) == 2


def test_a_failing_check_fn_means_unavailable(reg):
    def broken(ctx) -> bool:
        raise RuntimeError("probe crashed")

    _register(reg, "flaky", "extras", check_fn=broken)
    assert available_tool_names("extras", None, reg, cache=CheckCache()) == []


def test_requires_env_is_checked_through_the_secrets_accessor(reg, monkeypatch):
    _register(reg, "search_pro", "extras", requires_env=("SEARCH_PRO_KEY",))
    monkeypatch.setenv("SEARCH_PRO_KEY", "from-os-environ")  # must not count by itself
    empty = Secrets(environ={})
    assert available_tool_names("extras", None, reg, secrets=empty) == []
    assert available_tool_names("extras", None, reg, secrets=None) == []
    with_key = Secrets(environ={"SEARCH_PRO_KEY": "k"})
    assert available_tool_names("extras", None, reg, secrets=with_key) == ["search_pro"]


def test_builtin_table_has_no_dangling_includes():
    for toolset in BUILTIN_TOOLSETS.values():
        for included in toolset.includes:
            assert included in BUILTIN_TOOLSETS


# ---- the definitions cache ----------------------------------------------------------------


def test_definitions_are_cached_and_callers_get_copies(reg):
    cache = DefinitionsCache()
    cfg = HeraldConfig()
    first = select_tools(reg, cfg, bundle="herald-cli", cache=cache)
    first.definitions.append({"type": "function", "function": {"name": "injected"}})
    first.definitions[0]["function"]["description"] = "tampered"
    second = select_tools(reg, cfg, bundle="herald-cli", cache=cache)
    assert cache.builds == 1
    assert len(second.definitions) == len(BUILTIN_TOOLS)
    assert second.definitions[0]["function"]["description"] == "todo"
    assert second.names == tuple(d["function"]["name"] for d in second.definitions)


def test_definitions_cache_invalidates_on_generation_and_config(reg):
    cache = DefinitionsCache()
    cfg = HeraldConfig()
    select_tools(reg, cfg, cache=cache)
    _register(reg, "newcomer", "core")  # generation bump
    assert "newcomer" in select_tools(reg, cfg, cache=cache).names
    assert cache.builds == 2
    changed = config(disabled=["web"])
    assert "web_search" not in select_tools(reg, changed, cache=cache).names
    assert cache.builds == 3
    other = config(disabled=["web"])  # same content, another object: same fingerprint
    select_tools(reg, other, cache=cache)
    assert cache.builds == 3
    select_tools(reg, cfg, cache=cache, profile="work")
    assert cache.builds == 4


def test_definitions_cache_is_a_small_lru(reg):
    cache = DefinitionsCache(maxsize=2)
    cfg = HeraldConfig()
    for bundle in ("herald-cli", "herald-webhook", "core"):
        select_tools(reg, cfg, bundle=bundle, cache=cache)
    assert len(cache) == 2
    select_tools(reg, cfg, bundle="herald-cli", cache=cache)  # evicted: rebuilt
    assert cache.builds == 4


def test_explicit_names_replace_the_bundle_but_disabled_still_applies(reg):
    cache = DefinitionsCache()
    picked = select_tools(reg, config(enabled=["web"]), explicit=("todo", "ghost"), cache=cache)
    assert picked.names == ("todo",)
    hidden = select_tools(
        reg, config(disabled=["todo"]), explicit=("todo", "terminal"), cache=cache
    )
    assert hidden.names == ("terminal",)


def test_the_webhook_bundle_is_read_only_whatever_registers_in_core():
    """Untrusted webhook turns get no tool that writes, asks a human or reads history."""
    from herald.config import HeraldConfig
    from herald.toolbox import default_registry
    from herald.tools import available_tool_names

    registry = default_registry()

    names = set(available_tool_names("herald-webhook", HeraldConfig(), registry))
    assert names and names <= {"todo", "skills_list", "skill_view", "web_search", "web_extract"}
    cli = set(available_tool_names("herald-cli", HeraldConfig(), registry))
    assert {"skill_manage", "terminal", "write_file", "clarify"} <= cli


def test_the_offline_demo_model_gets_a_read_only_bundle():
    from herald.config import HeraldConfig
    from herald.toolbox import default_registry
    from herald.tools.toolsets import bundle_for

    registry = default_registry()

    # By default the 135M demo model chats without tools: offered even read-only
    # tools, it calls them for "Say hello" and answers with the tool's output.
    assert bundle_for("herald-cli", "local") == "herald-local-chat"
    assert available_tool_names("herald-local-chat", HeraldConfig(), registry) == []
    assert bundle_for("herald-cli", "openai") == "herald-cli"
    # The read-only bundle stays one setting away: toolsets.enabled: [herald-local].
    enabled = HeraldConfig.model_validate({"toolsets": {"enabled": ["herald-local"]}})
    assert set(available_tool_names("herald-local-chat", enabled, registry)) >= {"read_file"}
    names = set(available_tool_names("herald-local", HeraldConfig(), registry))
    assert {"read_file", "search_files", "todo"} <= names
    assert not names & {"terminal", "process", "write_file", "patch", "memory", "skill_manage"}
