"""Offering a built-in tool reads the catalog shipped beside herald.toolbox; the tool's
module is imported when the tool is called. The catalog must say exactly what the
modules would (the same definitions, byte for byte, and the same availability)."""

from __future__ import annotations

import json
import subprocess
import sys

from herald.toolbox import CAPABILITIES, OFFERS_FILE, builtin_tools, compile_offers
from herald.tools import ToolContext, ToolOffer, ToolRegistry, ToolSpec, select_tools
from herald.tools.offers import catalog_entry
from herald.tools.toolsets import available_tool_names


def test_the_shipped_catalog_matches_the_tool_modules():
    shipped = json.loads(OFFERS_FILE.read_text(encoding="utf-8"))
    compiled = compile_offers()
    stale = sorted(
        name for name in {*shipped, *compiled} if shipped.get(name) != compiled.get(name)
    )
    assert stale == [], (
        f"tool_offers.json is stale for {stale}: regenerate it with "
        "`python -m herald.toolbox --write-offers` and commit it"
    )
    # Key order is part of the bytes sent to the model: the JSON keeps the module's.
    for name, entry in compiled.items():
        assert json.dumps(shipped[name]) == json.dumps(entry), name


def test_offered_definitions_are_what_the_loaded_specs_give():
    """The same selection, once from the catalog (nothing imported) and once with every
    module loaded first, sends the same tools array."""
    from herald.config import HeraldConfig

    config = HeraldConfig()
    lazy = builtin_tools()
    loaded = builtin_tools()
    loaded._specs()  # every capability imported
    first = select_tools(lazy, config, bundle="herald-cli", profile="a")
    second = select_tools(loaded, config, bundle="herald-cli", profile="b")
    assert first.names == second.names
    assert json.dumps(first.definitions) == json.dumps(second.definitions)


def test_offering_a_bundle_imports_no_capability_without_a_check():
    """In a fresh interpreter: select the CLI bundle's tools; only the modules holding an
    availability check (skills, web search) are imported, and none of cron, delegation,
    the board or the file tools."""
    probe = (
        "import sys, json\n"
        "from herald.config import HeraldConfig\n"
        "from herald.toolbox import builtin_tools\n"
        "from herald.tools import select_tools\n"
        "sel = select_tools(builtin_tools(), HeraldConfig(), bundle='herald-cli')\n"
        "print(json.dumps([sel.names, sorted(sys.modules)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    names, modules = json.loads(out)
    assert {"cronjob", "delegate_task", "write_file", "terminal"} <= set(names)
    for module in (
        "herald.cron.tool",
        "herald.delegation.tool",
        "herald.tools.file_tools",
        "herald.tools.terminal",
        "herald.kanban.tools",
    ):
        assert module not in modules, module


def test_calling_an_offered_tool_imports_it():
    registry = builtin_tools()
    assert "todo" in available_tool_names("herald-cli", None, registry)
    assert "todo" not in registry.loaded_names()
    result = registry.dispatch("todo", {"todos": []}, ToolContext())
    assert not result.is_error
    assert "todo" in registry.loaded_names()


def test_a_check_is_named_by_module_and_runs_when_offered():
    calls: list[str] = []
    entry = {
        "definition": {"type": "function", "function": {"name": "x", "description": "x"}},
        "requires_env": [],
        "check": "herald.skills.availability:skills_enabled",
    }
    offer = ToolOffer.from_catalog("x", "core", entry)
    from herald.skills.availability import skills_enabled

    assert offer.check_fn is skills_enabled
    registry = ToolRegistry()
    registry.declare(("x",), "core", lambda: calls.append("load") or (), {"x": entry})
    assert registry.offer("x").check == entry["check"]
    assert calls == []  # offering did not load


def test_a_catalog_cannot_name_a_check_that_is_not_module_level():
    spec = ToolSpec(
        name="x",
        toolset="demo",
        schema={"name": "x", "description": "x", "parameters": {"type": "object"}},
        handler=lambda args, ctx: "x",
        check_fn=lambda ctx: True,
    )
    try:
        catalog_entry(spec)
    except ValueError as exc:
        assert "module-level" in str(exc)
    else:
        raise AssertionError("a lambda check was accepted")


def test_a_child_gate_hides_refused_tools_from_offers_too():
    from herald.delegation.policy import ChildRules, ChildToolGate

    base = builtin_tools()
    gate = ChildToolGate(
        base, ChildRules.for_child(depth=1, max_depth=1, fork=False), visible=["todo", "cronjob"]
    )
    assert gate.offer("todo") is not None
    assert gate.offer("cronjob") is None  # never for children
    assert gate.offer("write_file") is None  # not visible to this child


def test_every_capability_is_in_the_catalog():
    shipped = json.loads(OFFERS_FILE.read_text(encoding="utf-8"))
    for capability in CAPABILITIES:
        for name in capability.tools:
            assert name in shipped, name
