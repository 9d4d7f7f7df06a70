"""Markdown (what the model writes) as Slack mrkdwn.

Slack's mrkdwn is not Markdown: bold is `*x*`, italics `_x_`, strike `~x~`, links
`<url|text>`, no headings; `&`, `<` and `>` must be escaped or Slack reads them as
its own markup (a model could otherwise write `<!channel>` and ping everyone). Code
spans and blocks are kept as they are, escaped only.
"""

from __future__ import annotations

import re

SLACK_MAX_MESSAGE_LENGTH = 4000  # Slack splits or truncates longer text

_FENCE = re.compile(r"(```.*?```|`[^`\n]+`)", re.S)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_BOLD_UNDERSCORE = re.compile(r"__(?=\S)(.+?)(?<=\S)__")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)
_ITALIC_STAR = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _prose(text: str) -> str:
    text = escape(text)
    links: list[str] = []

    def keep_link(match: re.Match[str]) -> str:
        links.append(f"<{match.group(2)}|{match.group(1)}>")
        return f"\x00{len(links) - 1}\x00"

    text = _LINK.sub(keep_link, text)
    text = _ITALIC_STAR.sub(r"_\1_", text)
    text = _BOLD.sub(r"*\1*", text)
    text = _BOLD_UNDERSCORE.sub(r"*\1*", text)
    text = _STRIKE.sub(r"~\1~", text)
    text = _HEADING.sub(r"*\1*", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: links[int(m.group(1))], text)


def markdown_to_mrkdwn(text: str) -> str:
    parts = _FENCE.split(text)
    return "".join(escape(part) if i % 2 else _prose(part) for i, part in enumerate(parts))
