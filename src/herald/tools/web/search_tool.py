"""The `web_search` tool: one query to the configured backend, hits as JSON."""

from __future__ import annotations

import json

from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext
from herald.tools.web.backends import WebSearchError, backend_for, web_search_available
from herald.tools.web.common import TOOLSET, UNTRUSTED_NOTE, scrub, web_config

MAX_QUERY_CHARS = 400


@tool(
    toolset=TOOLSET,
    check=web_search_available,
    parallel_safe=True,
    max_result_chars=20_000,
    untrusted="web:search",
)
def web_search(ctx: ToolContext, query: str) -> str:
    """Search the web. Returns title, url and snippet per hit; read a page with web_extract."""
    if not query.strip():
        raise ToolArgumentError("query must be a non-empty string")
    query = " ".join(query.split())
    if len(query) > MAX_QUERY_CHARS:
        raise ToolArgumentError(f"query is too long (max {MAX_QUERY_CHARS} characters)")
    choice = backend_for(ctx)
    if choice.backend is None:
        raise ToolArgumentError(f"web search is not available: {choice.reason}")
    try:
        hits = choice.backend.search(query, max_results=web_config(ctx).max_results)
    except WebSearchError as exc:
        raise ToolArgumentError(f"web search failed: {exc}") from None
    payload = {
        "query": query,
        "note": UNTRUSTED_NOTE,
        "results": [
            {
                "title": scrub(h.title, ctx),
                "url": scrub(h.url, ctx),
                "snippet": scrub(h.snippet, ctx),
            }
            for h in hits
        ],
    }
    if not hits:
        payload["note"] = "no results; try other words"
    return json.dumps(payload, ensure_ascii=False)
