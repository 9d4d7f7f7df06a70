"""Answering a plugin's slash command on any surface (the REPL, the gateway).

A surface tries its built-in commands first (a plugin cannot replace ``/help``
or ``/stop``), then `answer_slash_command`. The handler runs on its own thread
with the hook time limit; a handler that raises or runs too long gets an
answer saying so, never a crash of the surface.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from herald.plugins.hooks import run_limited

if TYPE_CHECKING:
    from herald.plugins.loader import PluginSet

log = logging.getLogger(__name__)


def answer_slash_command(
    plugins: PluginSet, name: str, arg: str, *, session_id: str | None, surface: str
) -> str | None:
    """The answer of plugin command ``/name``; None when no plugin has that command."""
    command = plugins.slash_commands.get(name)
    if command is None:
        return None
    payload: dict[str, Any] = {"arg": arg, "session_id": session_id, "surface": surface}
    limit = plugins.hooks.timeout
    outcome = run_limited(command.handler, payload, limit, name=f"herald-slash-{name}")
    if outcome.timed_out:
        log.warning("/%s of plugin %s ran past %s s", name, command.plugin, limit)
        return f"/{name} (plugin {command.plugin}) did not answer within {limit:g} s."
    if outcome.error is not None:
        exc = outcome.error
        log.warning("/%s of plugin %s failed", name, command.plugin, exc_info=exc)
        return f"/{name} (plugin {command.plugin}) failed: {type(exc).__name__}: {exc}"
    value = outcome.value
    return value if isinstance(value, str) else ("" if value is None else str(value))


def slash_help_lines(plugins: PluginSet) -> list[str]:
    return [
        f"{c.usage:<26} {c.help}"
        for c in sorted(plugins.slash_commands.values(), key=lambda c: c.name)
    ]


__all__ = ["answer_slash_command", "slash_help_lines"]
