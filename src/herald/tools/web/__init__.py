"""The web tools (`web_search`, `web_extract`) in the "web" toolset.

`web_search` goes through a `SearchBackend` (SearXNG-compatible or Brave Search,
chosen by `web.search_backend`) and is offered only when one is usable;
`web_extract` fetches a page with httpx and returns readable text. Both mark
their output as untrusted web content and mask secrets. ``TOOLS`` holds both
(the composition root adds them; importing registers nothing).

Names load lazily (herald.lazy): the availability check `web_search_available`
lives beside the backends, so offering web_search imports neither tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from herald.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time each name loads on first use
    from herald.tools.registry import ToolRegistry
    from herald.tools.web.backends import (
        BackendChoice,
        BraveBackend,
        SearchBackend,
        SearchHit,
        SearxngBackend,
        WebSearchError,
        choose_backend,
        web_search_available,
    )
    from herald.tools.web.common import TOOLSET
    from herald.tools.web.extract_tool import web_extract
    from herald.tools.web.search_tool import web_search
    from herald.tools.web.tools import TOOLS

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.tools.web.backends": (
        "BackendChoice",
        "BraveBackend",
        "SearchBackend",
        "SearchHit",
        "SearxngBackend",
        "WebSearchError",
        "choose_backend",
        "web_search_available",
    ),
    "herald.tools.web.common": ("TOOLSET",),
    "herald.tools.web.extract_tool": ("web_extract",),
    "herald.tools.web.search_tool": ("web_search",),
    "herald.tools.web.tools": ("TOOLS",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    from herald.tools.web.tools import TOOLS

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
