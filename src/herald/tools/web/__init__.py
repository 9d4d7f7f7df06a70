"""The web tools (`web_search`, `web_extract`) in the "web" toolset.

`web_search` goes through a `SearchBackend` (SearXNG-compatible or Brave Search,
chosen by `web.search_backend`) and is offered only when one is usable;
`web_extract` fetches a page with httpx and returns readable text. Both mark
their output as untrusted web content and mask secrets. Importing this
package registers them on the shared registry.
"""

from __future__ import annotations

from herald.tools.registry import ToolRegistry, registry
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


def register(target: ToolRegistry = registry) -> None:
    target.register(
        "web_search",
        TOOLSET,
        SEARCH_SCHEMA,
        handle_web_search,
        check_fn=web_search_available,
        parallel_safe=True,
        max_result_chars=20_000,
    )
    target.register(
        "web_extract",
        TOOLSET,
        EXTRACT_SCHEMA,
        handle_web_extract,
        parallel_safe=True,
        # The tool caps its own text at web.extract_max_chars (default 40k); a larger
        # configured cap is left to the registry's spill.
        max_result_chars=50_000,
    )


register()

__all__ = [
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
