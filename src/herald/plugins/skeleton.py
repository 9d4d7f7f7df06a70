"""`herald plugins new NAME`: a working plugin to start from — a tool, a hook and a test."""

from __future__ import annotations

from pathlib import Path

from herald.plugins.manifest import NAME_RE

MANIFEST_TEXT = """\
name: {name}
version: 0.1.0
description: What {name} does, in one line
provides: [tools, hooks]
requires:
  python: []          # e.g. ["httpx>=0.27"]
  herald: ">=0.1"
"""

INIT_TEXT = '''\
"""The {name} plugin: one tool and one hook (see the README section on plugins)."""

from __future__ import annotations

from herald.tools import ToolContext, tool


@tool(toolset="plugin-{name}", parallel_safe=True)
def {func}_echo(ctx: ToolContext, text: str, times: int = 1) -> str:
    """Repeat some text (replace this with what your tool does).

    Args:
        text: the text to repeat
        times: how many times
    """
    return " ".join([text] * times)


def add_context(user_text: str) -> str | None:
    """pre_llm_call: text returned here rides on the user message sent to the model."""
    if "{lname}" in user_text.lower():
        return "The {name} plugin is installed; its tool is {func}_echo."
    return None


def register(ctx) -> None:
    ctx.register_tool({func}_echo)
    ctx.register_hook("pre_llm_call", add_context)
'''

TEST_TEXT = '''\
"""Run with: python -m pytest {path}"""

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_plugin():
    spec = importlib.util.spec_from_file_location(
        "{func}_plugin", HERE / "__init__.py", submodule_search_locations=[str(HERE)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_tool_and_the_hook():
    from herald.tools import ToolContext, ToolRegistry

    plugin = load_plugin()
    registry = ToolRegistry()
    registry.add(plugin.{func}_echo)
    result = registry.dispatch("{func}_echo", {{"text": "hi", "times": 2}}, ToolContext())
    assert result.content == "hi hi"
    assert "{func}_echo" in plugin.add_context("tell me about {name}")
    assert plugin.add_context("hello") is None
'''


def write_skeleton(root: Path, name: str) -> Path:
    """`root/<name>/` with plugin.yaml, __init__.py and test_plugin.py; refuses to
    overwrite an existing directory."""
    if not NAME_RE.match(name):
        raise ValueError(
            f"{name!r} is not a plugin name: start with a letter; letters, digits, - and _ only"
        )
    path = root / name
    if path.exists():
        raise FileExistsError(f"{path} already exists; pick another name or remove it first")
    path.mkdir(parents=True)
    func = name.replace("-", "_").lower()
    (path / "plugin.yaml").write_text(MANIFEST_TEXT.format(name=name), encoding="utf-8")
    (path / "__init__.py").write_text(
        INIT_TEXT.format(name=name, func=func, lname=name.lower()), encoding="utf-8"
    )
    test = path / "test_plugin.py"
    test.write_text(TEST_TEXT.format(name=name, func=func, path=test), encoding="utf-8")
    return path


__all__ = ["write_skeleton"]
