"""How the fake server reads message text: Telegram's length units and HTML parse mode.

Telegram counts message length in UTF-16 code units *after* entity parsing (an emoji
outside the Basic Multilingual Plane counts two, an HTML tag counts nothing), and it
refuses malformed markup with "can't parse entities" instead of sending it raw.
"""

from __future__ import annotations

import html
import re

MAX_MESSAGE_LENGTH = 4096  # UTF-16 code units of the parsed text
MAX_CALLBACK_DATA_BYTES = 64

# Tags Telegram's HTML parse mode accepts (https://core.telegram.org/bots/api#html-style).
HTML_TAGS = frozenset(
    {
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "span",
        "tg-spoiler",
        "a",
        "tg-emoji",
        "code",
        "pre",
        "blockquote",
    }
)
PARSE_MODES = frozenset({"HTML", "Markdown", "MarkdownV2"})

_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^<>]*)?)\s*(/?)>")
_ENTITY = re.compile(r"&(#[0-9]+|#[xX][0-9a-fA-F]+|lt|gt|amp|quot);")


class EntityParseError(ValueError):
    """The text's markup is malformed; the message says where, as Telegram does."""


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def parse_html(text: str) -> str:
    """The visible text of an HTML-mode message; raises `EntityParseError` like Telegram."""
    out: list[str] = []
    open_tags: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "<":
            match = _TAG.match(text, index)
            if match is None:
                raise EntityParseError(
                    f'Unsupported start tag "" at byte offset {_byte_offset(text, index)}'
                )
            closing, name = match.group(1) == "/", match.group(2).lower()
            if name not in HTML_TAGS:
                kind = "end" if closing else "start"
                raise EntityParseError(
                    f'Unsupported {kind} tag "{name}" at byte offset {_byte_offset(text, index)}'
                )
            if closing:
                if not open_tags or open_tags[-1] != name:
                    raise EntityParseError(
                        f"Unmatched end tag at byte offset {_byte_offset(text, index)}, "
                        f'expected "</{open_tags[-1] if open_tags else ""}>", found "</{name}>"'
                    )
                open_tags.pop()
            elif match.group(4) != "/":
                open_tags.append(name)
            index = match.end()
        elif char == "&":
            match = _ENTITY.match(text, index)
            if match is None:
                out.append("&")  # Telegram keeps a lone ampersand as text
                index += 1
            else:
                out.append(html.unescape(match.group(0)))
                index = match.end()
        else:
            out.append(char)
            index += 1
    if open_tags:
        raise EntityParseError(f'Can\'t find end tag corresponding to start tag "{open_tags[-1]}"')
    return "".join(out)


def visible_text(text: str, parse_mode: str | None) -> str:
    """The text Telegram would show (and measure) for `text` in `parse_mode`.

    Only HTML is parsed for real; the Markdown modes are measured as written (the
    adapter under test does not use them).
    """
    if parse_mode is None or parse_mode == "":
        return text
    if parse_mode not in PARSE_MODES:
        raise EntityParseError(f"unsupported parse_mode {parse_mode!r}")
    if parse_mode == "HTML":
        return parse_html(text)
    return text
