"""Deferred tool schemas: rarely needed tools cost one line until the model asks for them.

A deferred tool (a built-in named in `toolsets.deferred`, and by default every tool
an overlay appends: MCP servers, plugins) is left out of the tools array; the
`tool_search` tool lists each by name and one line, and loads full schemas on
demand. A loaded schema joins the tools array for the rest of the session at its
END, in load order, so the prefix the provider cached (the built-ins, sorted, then
`tool_search`) never moves. The engine accepts a call to any offered tool, loaded
or not; calling a deferred tool directly loads it too. The loaded names live in
the session meta, so a resumed session sends the same array.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from herald.config import HeraldConfig
    from herald.tools import ToolResult

TOOL_SEARCH = "tool_search"
META_KEY = "loaded_tools"
MAX_LINE = 100


def deferred_names(
    config: HeraldConfig, names: Sequence[str], appended: Sequence[str]
) -> tuple[str, ...]:
    section = config.toolsets
    wanted = set(section.deferred)
    if section.defer_external:
        wanted |= set(appended)
    return tuple(n for n in names if n in wanted and n != TOOL_SEARCH)


def one_line(definition: dict[str, Any]) -> str:
    text = (definition["function"].get("description") or "").strip().splitlines()
    line = text[0] if text else ""
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def search_definition(deferred: Sequence[dict[str, Any]]) -> dict[str, Any]:
    listing = "\n".join(f"- {d['function']['name']}: {one_line(d)}" for d in deferred)
    return {
        "type": "function",
        "function": {
            "name": TOOL_SEARCH,
            "description": (
                "Load the full schema of tools listed here by name only; once loaded, call "
                "them like any other tool. Ask by exact names or by a word to search for.\n"
                + listing
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "names": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "exact tool names to load",
                    },
                    "query": {
                        "type": "string",
                        "description": "a word to find in the names and descriptions",
                    },
                },
            },
        },
    }


@dataclass
class DeferredTools:
    """The deferred part of one turn's tools; `loaded` is the session's own list."""

    definitions: dict[str, dict[str, Any]]  # deferred name -> full definition
    loaded: list[str] = field(default_factory=list)

    def tools_tail(self) -> list[dict[str, Any]]:
        """`tool_search`, then the loaded schemas in load order."""
        listed = list(self.definitions.values())
        return [search_definition(listed), *(self.definitions[n] for n in self.loaded
                                             if n in self.definitions)]  # fmt: skip

    def load(self, names: Sequence[str]) -> list[str]:
        fresh = [n for n in names if n in self.definitions and n not in self.loaded]
        self.loaded.extend(fresh)
        return fresh

    def search(self, arguments: str) -> tuple[ToolResult, list[str]]:
        """Run `tool_search`: the schemas asked for (as JSON) and the names newly loaded."""
        from herald.tools import ToolResult

        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            args = None
        if not isinstance(args, dict):
            return ToolResult('arguments must be a JSON object: {"names": [...]}', True), []
        names = [n for n in args.get("names") or [] if isinstance(n, str)]
        query = str(args.get("query") or "").strip().lower()
        unknown = [n for n in names if n not in self.definitions]
        found = [n for n in names if n in self.definitions]
        if query:
            found += [
                n
                for n, d in self.definitions.items()
                if n not in found
                and (
                    query in n.lower() or query in (d["function"].get("description") or "").lower()
                )
            ]
        if not found:
            known = ", ".join(self.definitions) or "none"
            return ToolResult(
                f"no deferred tool matches; the deferred tools are: {known}", True
            ), []
        fresh = self.load(found)
        body: dict[str, Any] = {
            "loaded": found,
            "note": "these tools are now in your tool list; call them normally",
            "schemas": [self.definitions[n]["function"] for n in found],
        }
        if unknown:
            body["unknown"] = unknown
        return ToolResult(json.dumps(body, ensure_ascii=False)), fresh


__all__ = ["META_KEY", "TOOL_SEARCH", "DeferredTools", "deferred_names", "search_definition"]
