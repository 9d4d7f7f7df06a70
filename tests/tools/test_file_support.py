"""Shared helpers for the file and search tool tests (no tests here).

The tools run against the real `LocalEnvironment` over a tmp directory: real
files, real subprocesses. Calls go through a real `ToolRegistry` so argument
parsing, coercion and error sanitising are exercised as the engine sees them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from herald.environments.local import LocalEnvironment
from herald.tools.registry import ERROR_PREFIX, ToolContext, ToolRegistry, ToolResult


def make_ctx(root: Path, **fields: Any) -> ToolContext:
    return ToolContext(environment=LocalEnvironment(str(root)), **fields)


def make_registry() -> ToolRegistry:
    from herald.tools import clarify, file_tools, search_files

    reg = ToolRegistry()
    file_tools.register(reg)
    search_files.register(reg)
    clarify.register(reg)
    return reg


def call(reg: ToolRegistry, ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return reg.dispatch(name, json.dumps(args), ctx)


def ok(result: ToolResult) -> str:
    assert not result.is_error, result.content
    return result.content


def err(result: ToolResult) -> str:
    assert result.is_error, result.content
    assert result.content.startswith(ERROR_PREFIX)
    return result.content
