"""Signed webhooks: the adapter (``adapter``), its FastAPI app (``app``) and the
HMAC signature and replay-window check (``signing``).

`create_adapter` and `WebhookAdapter` load FastAPI on first use.
"""

from typing import Any

_LAZY = {"create_adapter", "WebhookAdapter"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = sorted(_LAZY)
