"""`WebBackend`: what the web app uses of the web platform adapter.

`herald.gateway.platforms.web.adapter.WebAdapter` builds the app when it connects and hands
itself in; the app modules (`app`, `routes`, `capabilities`) name only this
protocol, so they never import the adapter that imports them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from herald.config.schema_gateway import WebPlatformConfig
    from herald.gateway.platforms.web.attachments import WebFiles
    from herald.gateway.platforms.web.auth import TokenVerifier
    from herald.gateway.platforms.web.events import ChatEvents
    from herald.state import StateStore


class WebBackend(Protocol):
    name: str  # the platform name in session keys ("web")
    settings: WebPlatformConfig
    base_path: str  # "" or "/sub/path" behind a reverse proxy
    home_root: Path
    cwd: Path  # where uploads land
    verifier: TokenVerifier
    events: ChatEvents
    files: WebFiles  # uploads waiting for their message, files sent to the page
    running: dict[str, str]  # chat id -> message id of the running turn

    @property
    def default_profile(self) -> str:
        """The profile the web chat's sessions belong to (the runner's default)."""
        ...

    def store(self) -> StateStore: ...

    def redact(self, text: str) -> str: ...

    def submit(self, chat_id: str, text: str, files: list[str] | None = None) -> str: ...

    def platform_health(self) -> dict[str, Any]:
        """The gateway's platforms and their recent transitions (the watchdog's report)."""
        ...
