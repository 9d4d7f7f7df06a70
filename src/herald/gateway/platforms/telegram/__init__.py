"""Telegram: python-telegram-bot long polling (``adapter``), update parsing
(``events``), Bot API failure mapping (``delivery``), Telegram HTML (``format``),
inline-button payloads (``buttons``), the token setting (``config``) and token masking
in library logs (``logs``). Its fake server is `herald.testing.fake_telegram`.

`create_adapter` and `TelegramAdapter` load python-telegram-bot on first use.
"""

from typing import Any

_LAZY = {"create_adapter", "TelegramAdapter", "TelegramConnectError"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = sorted(_LAZY)
