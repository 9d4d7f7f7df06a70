"""The browser toolset (``browser``): a headless Chromium the model drives by element
refs from an accessibility snapshot.

Playwright drives Debian's Chromium (never a downloaded one); one browser context per
session, started on first use, closed with the session or when idle. Every request
pages make meets the web tools' URL policy (`herald.tools.web.fetch.check_url`); page
text is untrusted content from ``web:<url>``; no Chromium outlives Herald
(`reaper`). Playwright is imported only when a browser starts.
"""

from __future__ import annotations

from herald.tools.browser.reaper import new_profile, processes_using, reap_orphans
from herald.tools.browser.session import BrowserError, BrowserSession, find_chromium
from herald.tools.browser.tools import TOOLS, TOOLSET, untrusted_source
from herald.tools.registry import ToolRegistry


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = [
    "TOOLS",
    "TOOLSET",
    "BrowserError",
    "BrowserSession",
    "find_chromium",
    "new_profile",
    "processes_using",
    "reap_orphans",
    "register",
    "untrusted_source",
]
