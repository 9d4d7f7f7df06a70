"""WhatsApp through Meta's Cloud API: signed webhooks in (``webhook``, parsed by
``events``), the Graph API out (``graph``), the adapter itself (``adapter``). Its fake
is `herald.testing.fake_whatsapp`.

`create_adapter` loads the adapter (FastAPI, httpx) on first use.
"""

from typing import Any

_LAZY = {"create_adapter", "WhatsAppAdapter"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = sorted(_LAZY)
