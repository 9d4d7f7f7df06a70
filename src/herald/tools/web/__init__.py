"""The web tools (`web_search`, `web_extract`) in the "web" toolset.

`web_search` goes through a `SearchBackend` (SearXNG-compatible or Brave Search,
chosen by `web.search_backend`) and is offered only when one is usable;
`web_extract` fetches a page with httpx and returns readable text. Both mark
their output as untrusted web content and mask secrets. ``TOOLS`` holds both
(the composition root adds them; importing registers nothing).
"""

from __future__ import annotations

from herald.tools.registry import ToolRegistry, ToolSpec
from herald.tools.web.backends import (
    BackendChoice,
    BraveBackend,
    SearchBackend,
    SearchHit,
    SearxngBackend,
    WebSearchError,
    choose_backend,
)
from herald.tools.web.common import TOOLSET
from herald.tools.web.extract_tool import web_extract
from herald.tools.web.search_tool import web_search, web_search_available

# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (web_search, web_extract)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = [
    "TOOLS",
    "TOOLSET",
    "BackendChoice",
    "BraveBackend",
    "SearchBackend",
    "SearchHit",
    "SearxngBackend",
    "WebSearchError",
    "choose_backend",
    "register",
    "web_extract",
    "web_search",
    "web_search_available",
]
