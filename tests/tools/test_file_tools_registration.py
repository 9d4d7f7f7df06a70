"""How the file, search, clarify and web tools register: names, toolsets, scopes, sizes."""

from __future__ import annotations

import json

import pytest

from herald.tools import clarify, file_tools, search_files
from herald.tools import web as web_tools
from herald.tools.registry import ToolRegistry

EXPECTED = {
    # name: (toolset, parallel_safe, path_scope, required arguments)
    "read_file": ("file", True, "read:path", ["path"]),
    "write_file": ("file", False, "write:path", ["path", "content"]),
    "patch": ("file", False, "write:path", ["path"]),
    "search_files": ("file", True, "read:path", ["pattern"]),
    "clarify": ("core", False, None, ["question"]),
    "web_search": ("web", True, None, ["query"]),
    "web_extract": ("web", True, None, ["url"]),
}
# The schemas Herald sends must stay small.
MAX_SCHEMA_BYTES = 700


@pytest.fixture(scope="module")
def reg() -> ToolRegistry:
    r = ToolRegistry()
    for module in (file_tools, search_files, clarify, web_tools):
        module.register(r)
    return r


def test_every_tool_registers_as_the_contract_says(reg):
    assert sorted(reg.names()) == sorted(EXPECTED)
    for name, (toolset, parallel, scope, required) in EXPECTED.items():
        spec = reg.get(name)
        assert spec is not None
        assert (spec.toolset, spec.parallel_safe, spec.path_scope) == (toolset, parallel, scope)
        assert spec.schema["parameters"]["required"] == required
        assert 1000 <= spec.max_result_chars <= 60_000


def test_patch_offers_both_modes(reg):
    props = reg.get("patch").schema["parameters"]["properties"]
    assert {"old_text", "new_text", "diff"} <= set(props)
    assert reg.get("search_files").schema["parameters"]["properties"]["mode"]["enum"] == [
        "content",
        "files",
    ]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_schemas_are_small(reg, name):
    size = len(json.dumps(reg.definitions([name])[0], separators=(",", ":")))
    assert size <= MAX_SCHEMA_BYTES, f"{name} schema is {size} bytes"


def test_the_composition_root_assembles_them_and_importing_registers_nothing():
    import subprocess
    import sys

    from herald.toolbox import default_registry

    probe = (
        "import herald.tools.file_tools, herald.memory.tool, herald.skills.tools\n"
        "import herald.tools.registry as module\n"
        "from herald.tools import ToolRegistry\n"
        "print(sum(isinstance(v, ToolRegistry) for v in vars(module).values()))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"  # no process-wide registry to register on
    assert set(EXPECTED) <= set(default_registry().names())
