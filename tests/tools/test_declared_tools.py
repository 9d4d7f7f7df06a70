"""A registry is a value its surface owns; the toolbox declares each capability's tools by
name, and a capability's module is imported when one of its tools is first looked up."""

from __future__ import annotations

import pytest

from herald.toolbox import CAPABILITIES, builtin_tools
from herald.tools import ToolRegistry, ToolSpec, available_tool_names


def _spec(name: str, toolset: str = "demo") -> ToolSpec:
    return ToolSpec(
        name=name,
        toolset=toolset,
        schema={"name": name, "description": name, "parameters": {"type": "object"}},
        handler=lambda args, ctx: name,
    )


def test_declared_tools_load_on_first_lookup_and_only_once():
    loads: list[str] = []

    def load() -> tuple[ToolSpec, ...]:
        loads.append("demo")
        return (_spec("a"), _spec("b"))

    registry = ToolRegistry()
    registry.declare(("a", "b"), "demo", load)
    generation = registry.generation
    assert registry.names() == ["a", "b"]
    assert registry.toolsets() == {"demo": ["a", "b"]}
    assert loads == []  # naming and grouping tools imports nothing
    assert registry.get("b") is not None and registry.get("a") is not None
    assert loads == ["demo"]
    assert registry.generation == generation  # loading does not change the set of tools
    assert registry.loaded_names() == ["a", "b"]


def test_a_declaration_that_does_not_match_its_module_is_an_error():
    registry = ToolRegistry()
    registry.declare(("a",), "demo", lambda: (_spec("a"), _spec("surprise")))
    with pytest.raises(ValueError, match="surprise"):
        registry.get("a")


def test_each_surface_gets_its_own_registry():
    first, second = builtin_tools(), builtin_tools()
    first.register("only_here", "demo", {"description": "x", "parameters": {"type": "object"}},
                   lambda args, ctx: "x")  # fmt: skip
    assert first.get("only_here") is not None
    assert second.get("only_here") is None


def test_every_capability_declares_exactly_its_modules_tools():
    """The one line per capability in herald.toolbox names what its module exports."""
    for capability in CAPABILITIES:
        registry = builtin_tools((capability,))
        for name in capability.tools:
            spec = registry.get(name)
            assert spec is not None and spec.toolset == capability.toolset, capability


def test_a_bundle_loads_only_the_capabilities_it_offers():
    registry = builtin_tools()
    names = available_tool_names("herald-webhook", None, registry)
    assert set(names) <= {"todo", "skills_list", "skill_view", "web_search", "web_extract"}
    loaded = registry.loaded_names()
    assert not any(n.startswith(("kanban_", "cronjob", "delegate")) for n in loaded), loaded
    assert "terminal" not in loaded and "write_file" not in loaded
