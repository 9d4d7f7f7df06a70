"""The `web_extract` tool: fetch one URL and return its readable text.

HTML becomes markdown (headings, links, lists, tables kept; page chrome cut);
plain text, JSON, XML and other text types pass through. The result starts
with a line marking it as untrusted web content, secrets are masked, and the
text is capped at `web.extract_max_chars`.
"""

from __future__ import annotations

from herald.safety.provenance import untrusted
from herald.tools.consequence import url_sends_data
from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolResult
from herald.tools.web.common import TOOLSET, UNTRUSTED_NOTE, scrub, web_config
from herald.tools.web.fetch import FetchedPage, FetchError, decode_body, fetch

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-ndjson",
)


def _kind(page: FetchedPage) -> str:
    """html | text | unsupported."""
    media = page.content_type
    if media in _HTML_TYPES:
        return "html"
    if media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml")):
        return "text"
    if not media:
        head = page.body[:512].lstrip().lower()
        if head.startswith((b"<!doctype html", b"<html")):
            return "html"
        if b"\x00" not in page.body[:1024]:
            return "text"
    return "unsupported"


def _cap(text: str, limit: int) -> tuple[str, str | None]:
    if len(text) <= limit:
        return text, None
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > limit * 0.8 else limit
    return text[:cut], f"[text cut at {cut:,} of {len(text):,} characters]"


@tool(
    toolset=TOOLSET,
    parallel_safe=True,
    max_result_chars=50_000,
    controls=("url",),
    consequential=True,
    consequence=url_sends_data,
)
def web_extract(ctx: ToolContext, url: str) -> ToolResult:
    """Fetch an http(s) URL and return its readable text (HTML as markdown with links;
    text and JSON as-is)."""
    if not url.strip():
        raise ToolArgumentError("url must be a non-empty http(s) URL")
    config = web_config(ctx)
    try:
        page = fetch(
            url,
            timeout=config.timeout,
            max_bytes=config.extract_max_bytes,
            max_redirects=config.max_redirects,
            user_agent=config.user_agent,
            allow_private=config.allow_private_networks,
        )
    except FetchError as exc:
        raise ToolArgumentError(str(exc)) from None
    if page.status >= 400:
        raise ToolArgumentError(
            f"HTTP {page.status} from {page.url}: the page could not be read"
            + (" (it does not exist)" if page.status in (404, 410) else "")
        )
    kind = _kind(page)
    if kind == "unsupported":
        raise ToolArgumentError(
            f"{page.url} is {page.content_type or 'binary data'}, which web_extract cannot "
            "read (it reads HTML, text and JSON)"
        )
    text = decode_body(page, sniff_html=kind == "html")
    title = None
    if kind == "html":
        from herald.tools.web.html_text import html_to_markdown

        title, text = html_to_markdown(text, page.url)
    text, cut_note = _cap(text, config.extract_max_chars)
    header = [f"[{UNTRUSTED_NOTE}; source: {page.url}]"]
    if page.url.rstrip("/") != url.strip().rstrip("/"):
        header[0] = header[0][:-1] + f", redirected from {url.strip()}]"
    if title:
        header.append(f"Title: {title}")
    notes = [n for n in (cut_note,) if n]
    if page.truncated:
        notes.append(
            f"[download stopped at {config.extract_max_bytes:,} bytes; the page is longer]"
        )
    if not text.strip():
        notes.append("[the page has no readable text; it may need JavaScript to render]")
    body = scrub("\n".join([*header, "", text, *notes]).strip(), ctx)
    return ToolResult(body, provenance=untrusted(f"web:{page.url}"))
