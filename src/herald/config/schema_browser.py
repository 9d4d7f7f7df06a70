"""Config section for the browser toolset (`browser.*`): a headless Chromium driven by
Playwright. Which addresses it may reach is the web tools' policy
(`web.allow_private_networks`), applied to every request the page makes."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class BrowserConfig(StrictModel):
    executable: str | None = Field(
        None,
        description="the Chromium binary; unset = chromium or chromium-browser on PATH "
        "(Debian: apt install chromium). Herald never downloads a browser",
    )
    idle_timeout_seconds: int = Field(
        300, ge=10, description="close the session's browser after this long without a call"
    )
    navigation_timeout_seconds: int = Field(
        20, ge=1, le=300, description="seconds a navigation or an action may take"
    )
    snapshot_max_chars: int = Field(
        12_000, ge=1000, le=200_000, description="characters of page snapshot shown at most"
    )
    downloads: bool = Field(
        True, description="save files the page downloads under <workdir>/downloads"
    )
