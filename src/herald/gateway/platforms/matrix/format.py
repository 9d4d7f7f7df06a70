"""What the model writes (Markdown) as Matrix's HTML ``formatted_body``, beside the plain
``body`` every client can show.

Raw HTML in the model's text is escaped, never passed on (a hijacked model could
otherwise write pills, forms or anything else a client renders), and images are not
rendered (an ``<img>`` a client fetches tells its address to whoever serves it): they
stay links. Mentions need no escaping here: Herald's events carry an empty
``m.mentions``, so no client notifies anyone for them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _renderer() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).disable("image")


def with_html(content: dict[str, Any], text: str) -> dict[str, Any]:
    """`content` with `text` rendered as its formatted body (when it has any markup)."""
    html = _renderer().render(text).strip()
    if html != f"<p>{_escape(text)}</p>":  # plain prose needs no formatted copy
        content["format"] = "org.matrix.custom.html"
        content["formatted_body"] = html
    return content


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["with_html"]
