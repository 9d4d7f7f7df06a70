"""The web tools' specs as one value (herald.toolbox loads it when a web tool is called)."""

from __future__ import annotations

from herald.tools.registry import ToolSpec
from herald.tools.web.extract_tool import web_extract
from herald.tools.web.search_tool import web_search

# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (web_search, web_extract)

__all__ = ["TOOLS"]
