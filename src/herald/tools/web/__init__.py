"""The web tools (`web_search`, `web_extract`) in the "web" toolset.

`web_search` goes through a `SearchBackend` (SearXNG-compatible or Brave Search,
chosen by `web.search_backend`) and is offered only when one is usable;
`web_extract` fetches a page with httpx and returns readable text. Both mark
their output as untrusted web content and mask secrets. Importing this
package registers them on the shared registry.
"""

from __future__ import annotations

from herald.tools.declare import tool
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
from herald.tools.web.extract_tool import SCHEMA as EXTRACT_SCHEMA
from herald.tools.web.extract_tool import handle_web_extract
from herald.tools.web.search_tool import SCHEMA as SEARCH_SCHEMA
from herald.tools.web.search_tool import handle_web_search, web_search_available

TOOLSET = "web"


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (
    tool(
        name="web_search",
        toolset=TOOLSET,
        schema=SEARCH_SCHEMA,
        check=web_search_available,
        parallel_safe=True,
        max_result_chars=20_000,
    )(lambda ctx, **args: handle_web_search(args, ctx)),
    tool(
        name="web_extract",
        toolset=TOOLSET,
        schema=EXTRACT_SCHEMA,
        parallel_safe=True,
        max_result_chars=50_000,
    )(lambda ctx, **args: handle_web_extract(args, ctx)),
)


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
    "handle_web_extract",
    "handle_web_search",
    "register",
    "web_search_available",
]
