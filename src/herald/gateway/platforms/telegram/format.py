"""Telegram's text rules for the adapter: length in UTF-16 code units, and the
runner's Markdown-ish replies rendered as Telegram HTML.

HTML is the parse mode with the simplest escaping (only ``& < >``), so any text can be
made safe. The rendering never makes the *visible* text longer than the input
(markers and fence lines disappear, bullets keep their width), and Telegram measures
the visible text, so a part the runner split by `utf16_length` of the Markdown still
fits after rendering. Anything the renderer cannot nest cleanly goes out escaped
instead of half-formatted.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

TELEGRAM_MAX_MESSAGE_LENGTH = 4096

_FENCE = re.compile(r"^\s*```\s*([\w+#.-]*)\s*$")
_TICKS = re.compile(r"`+")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+](\s+)")
# The link text holds no bracket: a search from each "[" then stops at the next one
# (with any bracket allowed, a line of "[" took time growing with its square).
_LINK = re.compile(r"\[([^\[\]\n]+)\]\((https?://[^\s)\"<>]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_TAG = re.compile(r"<(/?)([a-z]+)[^>]*>")


def utf16_length(text: str) -> int:
    """Length as Telegram counts it: an emoji outside the BMP counts two."""
    return len(text.encode("utf-16-le")) // 2


def escape(text: str) -> str:
    return html.escape(text, quote=False)


def markdown_to_html(text: str) -> str:
    """Telegram HTML for Markdown-ish `text` (fences, inline code, bold, strike, links,
    headings, bullets); everything else is escaped and shown as written.

    Single `*`/`_` italics are left as written on purpose: globs, paths and identifiers
    are full of them (`rm *.tmp*`), and a command shown for approval must read exactly
    as it will run."""
    out: list[str] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            out.append(_render_line(lines[index]))
            index += 1
            continue
        language = fence.group(1)
        end = index + 1
        while end < len(lines) and _FENCE.match(lines[end]) is None:
            end += 1
        body = escape("\n".join(lines[index + 1 : end]))
        if not body.strip():
            body = escape(lines[index].strip())  # an empty block: show the fence itself
            out.append(body)
        elif language:
            out.append(f'<pre><code class="language-{escape(language)}">{body}</code></pre>')
        else:
            out.append(f"<pre>{body}</pre>")
        index = end + 1  # an unclosed fence runs to the end, as Markdown renders it
    rendered = "\n".join(out)
    return rendered if _well_nested(rendered) else escape(text)


def _render_line(line: str) -> str:
    heading = _HEADING.match(line)
    if heading is not None:
        return f"<b>{_render_inline(heading.group(1))}</b>"
    bullet = _BULLET.match(line)
    if bullet is not None:
        line = f"{bullet.group(1)}•{bullet.group(2)}{line[bullet.end() :]}"
    return _render_inline(line)


def _render_inline(text: str) -> str:
    parts: list[str] = []
    cursor = 0
    for start, end, code in _code_spans(text):
        parts.append(_render_prose(text[cursor:start]))
        parts.append(f"<code>{escape(code)}</code>")
        cursor = end
    parts.append(_render_prose(text[cursor:]))
    return "".join(parts)


def _code_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, code) of each inline code span in `text`: a run of backticks, then
    code, closed by the next run of exactly as many backticks (so "``a ` b``" holds a
    backtick), as CommonMark pairs them; one space comes off each end of code that has
    one at both ("`` `date` ``"). A run with no such closer, or only spaces inside,
    is text. One pass over the runs: the regex this replaces, `(`+)(.+?)\\1`, tried every
    split of every run, and a reply line of 4,096 backticks held the event loop 2.3 s
    on every render (each edit of a streamed reply)."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    closer: list[int | None] = [None] * len(runs)  # the next run as long as this one
    seen: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        width = runs[index][1] - runs[index][0]
        closer[index] = seen.get(width)
        seen[width] = index
    index = 0
    while index < len(runs):
        close = closer[index]
        if close is not None:
            code = text[runs[index][1] : runs[close][0]]
            if code.strip():
                if code[0] == " " and code[-1] == " ":  # "`` `a` ``": one space off each end
                    code = code[1:-1]
                yield runs[index][0], runs[close][1], code
                index = close + 1
                continue
        index += 1


def _render_prose(text: str) -> str:
    if not text:
        return ""
    rendered = escape(text)
    rendered = _LINK.sub(
        lambda m: f'<a href="{m.group(2).replace(chr(34), "&quot;")}">{m.group(1)}</a>', rendered
    )
    rendered = _BOLD.sub(r"<b>\1</b>", rendered)
    return _STRIKE.sub(r"<s>\1</s>", rendered)


def _well_nested(rendered: str) -> bool:
    stack: list[str] = []
    for match in _TAG.finditer(rendered):
        closing, name = match.group(1) == "/", match.group(2)
        if not closing:
            stack.append(name)
        elif not stack or stack.pop() != name:
            return False
    return not stack
