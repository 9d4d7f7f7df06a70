"""Signal, through a linked signal-cli daemon (``signal-cli daemon --http``): its event
stream in, JSON-RPC out (``adapter``). Its fake is `herald.testing.fake_signal`.

`create_adapter` loads the adapter (and httpx) on first use.
"""

from typing import Any

_LAZY = {"create_adapter", "SignalAdapter"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = sorted(_LAZY)
