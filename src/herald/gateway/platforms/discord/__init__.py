"""Discord: the discord.py gateway client (``adapter``), messages and interactions as
events (``events``), attachments saved into the workdir (``attachments``), the bot
token setting (``config``) and a client routed to its own REST base and gateway
(``connection``, for the fake and for proxies). Its fake server is
`herald.testing.fake_discord`.

`create_adapter` and `DiscordAdapter` load discord.py on first use.
"""

from typing import Any

_LAZY = {"create_adapter", "DiscordAdapter", "DiscordConnectError"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = sorted(_LAZY)
