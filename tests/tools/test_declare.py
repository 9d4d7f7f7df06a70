"""`@tool`: the schema and the argument errors come from the signature and docstring."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import Field

from herald.tools import ToolContext, ToolRegistry, tool


@tool(toolset="demo", parallel_safe=True, reads=("path",))
def peek(ctx: ToolContext, path: str, limit: int = 10, label: str | None = None) -> str:
    """Show the start of a file.

    Args:
        path: the file to read
        limit: how many lines
    """
    return json.dumps({"path": path, "limit": limit, "label": label})


def test_schema_comes_from_signature_and_docstring():
    spec = peek
    assert spec.name == "peek" and spec.toolset == "demo" and spec.parallel_safe
    assert spec.path_scope == "read:path"
    fn = spec.definition()["function"]
    assert fn["description"] == "Show the start of a file."
    params = fn["parameters"]
    assert params["required"] == ["path"]
    assert params["properties"]["path"] == {"type": "string", "description": "the file to read"}
    assert params["properties"]["limit"]["type"] == "integer"
    assert params["properties"]["label"] == {"type": "string"}  # optional, no null noise


def test_declared_tool_runs_through_a_registry_with_clear_argument_errors():
    reg = ToolRegistry()
    reg.add(peek)
    ok = reg.dispatch("peek", {"path": "a.txt", "limit": "3"}, ToolContext())
    assert not ok.is_error and json.loads(ok.content)["limit"] == 3
    missing = reg.dispatch("peek", {}, ToolContext())
    assert missing.is_error and "path is required" in missing.content
    extra = reg.dispatch("peek", {"path": "a", "bogus": 1}, ToolContext())
    assert extra.is_error and "'bogus' is not an argument of peek" in extra.content


def test_argument_errors_read_like_the_hand_written_checks():
    @tool(toolset="demo")
    def pick(
        ctx: ToolContext,
        mode: Literal["a", "b"],
        offset: Annotated[int, Field(ge=1)] = 1,
        name: str = "x",
    ) -> str:
        """Pick something."""
        return mode

    reg = ToolRegistry()
    reg.add(pick)

    def error(**args) -> str:
        result = reg.dispatch("pick", args, ToolContext())
        assert result.is_error
        return result.content

    assert "mode must be one of 'a' or 'b', got 'c'" in error(mode="c")
    assert "offset must be at least 1, got 0" in error(mode="a", offset=0)
    assert "offset must be an integer, got 'soon'" in error(mode="a", offset="soon")
    assert "name must be a string, got a list" in error(mode="a", name=["x"])


def test_null_for_an_optional_argument_means_not_given_and_null_is_named():
    reg = ToolRegistry()
    reg.add(peek)
    ok = reg.dispatch("peek", {"path": "a", "limit": None, "label": None}, ToolContext())
    assert not ok.is_error and json.loads(ok.content)["limit"] == 10  # the default
    missing = reg.dispatch("peek", {"path": None}, ToolContext())
    assert missing.is_error and "path must be a string, got null" in missing.content
