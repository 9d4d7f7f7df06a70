"""HTML to readable markdown for `web_extract`.

Uses `markdownify` (MIT, maintained, on BeautifulSoup with the stdlib parser):
it keeps headings, links, lists, code blocks and tables faithfully and
deterministically. Before converting, page chrome is cut away (scripts,
styles, forms, nav/header/footer/aside, and everything outside <main> or the
main <article> when the page has one) and links are made absolute, so the
model can follow them. Imported lazily: only `web_extract` needs it.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin

_DROP_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "button",
    "input",
    "select",
    "textarea",
    "link",
    "meta",
    "img",
    "picture",
    "video",
    "audio",
)
_CHROME_TAGS = ("nav", "footer", "aside")
_CHROME_ROLES = ("navigation", "banner", "contentinfo", "complementary", "search")
_BLANK_LINES_RE = re.compile(r"\n{3,}")
_SPACES_RE = re.compile(r"[ \t]{2,}|\t")
_TRAILING_SPACE_RE = re.compile(r"(?<![ \t])[ \t]+\n")  # from a run's start only: linear


def _text_len(node: Any) -> int:
    return len(node.get_text(" ", strip=True))


def _main_content(soup: Any) -> Any:
    """<main> / role=main / the largest <article>, when it holds a fair share of the text."""
    body = soup.body or soup
    total = _text_len(body)
    candidates = [soup.find("main"), soup.find(attrs={"role": "main"})]
    articles = soup.find_all("article")
    if articles:
        candidates.append(max(articles, key=_text_len))
    for node in candidates:
        if node is not None and total and _text_len(node) >= 0.25 * total:
            return node
    return body


def _remove_chrome(root: Any) -> None:
    for tag in root.find_all(_CHROME_TAGS):
        tag.decompose()
    for tag in root.find_all(attrs={"role": list(_CHROME_ROLES)}):
        tag.decompose()
    for tag in root.find_all("header"):
        # A page header is chrome; an article's own header holds its title.
        if tag.find_parent(["article", "main"]) is None:
            tag.decompose()


def _absolute_links(root: Any, base_url: str) -> None:
    for anchor in root.find_all("a"):
        href = (anchor.get("href") or "").strip()
        if not href or href.startswith(("javascript:", "data:", "#")):
            anchor.unwrap()
            continue
        anchor["href"] = urljoin(base_url, href)


def _squeeze_spaces(root: Any) -> None:
    """Runs of spaces and tabs in running text made one space, as markdownify makes
    them anyway, before it sees them: its newline pattern read a long run again from
    each of its characters (a page with 40,000 spaces in a paragraph took 4.5 s to
    read, 160,000 took over a minute). Only a <pre> keeps its spaces: markdownify
    squeezes inline <code> too."""
    from bs4 import NavigableString

    for string in root.find_all(string=True):
        if type(string) is not NavigableString or _SPACES_RE.search(string) is None:
            continue
        if string.find_parent("pre") is None:
            string.replace_with(NavigableString(_SPACES_RE.sub(" ", string)))


def html_to_markdown(html: str, base_url: str) -> tuple[str | None, str]:
    """The page title (if any) and the main content as markdown."""
    from bs4 import BeautifulSoup, Comment
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    if soup.head is not None:
        soup.head.decompose()
    root = _main_content(soup)
    _remove_chrome(root)
    _absolute_links(root, base_url)
    _squeeze_spaces(root)
    converter = MarkdownConverter(
        heading_style="ATX",
        bullets="-",
        escape_asterisks=False,
        escape_underscores=False,
        escape_misc=False,
        newline_style="backslash",
        # One newline off each end of a <pre>: stripping them all used a pattern that
        # read a long run of spaces again from each of them (80,000 took 47 s); the
        # blank lines left are folded below.
        strip_pre="strip_one",
    )
    text = converter.convert_soup(root)
    text = _TRAILING_SPACE_RE.sub("\n", text)
    text = _BLANK_LINES_RE.sub("\n\n", text).strip()
    return (title or None), text
