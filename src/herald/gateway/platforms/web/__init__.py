"""The web chat and dashboard (L6, served by the gateway's `web` platform).

``adapter`` is the platform adapter; this package also holds its login and CSRF
guard (`auth`), the per-chat live event streams (`events`), the FastAPI app (`app`,
`routes`) and the page itself (``static/``: plain HTML, CSS and JavaScript, no build
step and no third-party requests). `create_adapter` and `WebAdapter` load FastAPI on
first use; the login-token helpers the CLI needs stay light.
"""

from typing import Any

from herald.gateway.platforms.web.auth import create_token, login_token_matcher, token_path
from herald.gateway.platforms.web.events import ChatEvents

_LAZY = {"create_adapter", "WebAdapter"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = [
    "ChatEvents",
    "WebAdapter",
    "create_adapter",
    "create_token",
    "login_token_matcher",
    "token_path",
]
