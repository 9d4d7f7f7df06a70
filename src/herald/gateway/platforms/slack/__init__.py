"""Slack: slack-bolt over Socket Mode or HTTP events (``adapter``), events and
interactions as `MessageEvent`s (``events``), Markdown as mrkdwn (``format``), files
saved into the workdir (``files``) and the token settings (``config``). Its fake
server is `herald.testing.fake_slack`.

`create_adapter` and `SlackAdapter` load slack-bolt on first use.
"""

from typing import Any

_LAZY = {"create_adapter", "SlackAdapter", "SlackConnectError"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = sorted(_LAZY)
