"""The OpenAI-compatible HTTP API: the adapter (``adapter``), the FastAPI app
(``app``), chat-completion requests (``chat``, ``conversations``, ``models``,
``openapi``, ``stream``), Herald's session endpoints (``sessions``) and the callers'
keys (``keys``).

`create_adapter` and `ApiAdapter` load FastAPI on first use.
"""

from typing import Any

_LAZY = {"create_adapter", "ApiAdapter"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = sorted(_LAZY)
