"""`pre_tool_call` / `post_tool_call` hooks around every dispatched tool call.

A pre hook is called as ``fn(name, args, ctx)`` and returns:

- None: go on unchanged;
- a ``str``: veto — the call does not run and the model gets that reason as an error;
- a ``dict``: the arguments to use instead (a rewrite).

A post hook is called as ``fn(name, args, result, ctx)`` and only observes.
A hook that raises is logged and skipped; it never breaks the call. Internal
calls pass ``run_hooks=False`` to `ToolRegistry.dispatch` to bypass them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from herald.tools.registry import ToolContext, ToolResult

log = logging.getLogger(__name__)

HookEvent = Literal["pre_tool_call", "post_tool_call"]
HOOK_EVENTS: tuple[str, ...] = ("pre_tool_call", "post_tool_call")

PreToolHook = Callable[[str, dict[str, Any], "ToolContext"], "str | dict[str, Any] | None"]
PostToolHook = Callable[[str, dict[str, Any], "ToolResult", "ToolContext"], None]


class Veto(Exception):
    """Raised internally when a pre hook refuses a call; carries the reason."""

    def __init__(self, reason: str, hook: str):
        super().__init__(reason)
        self.reason = reason
        self.hook = hook


def _hook_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


class ToolHooks:
    def __init__(self) -> None:
        self._pre: list[PreToolHook] = []
        self._post: list[PostToolHook] = []
        self._lock = threading.Lock()

    def add(self, event: str, fn: Callable[..., Any]) -> None:
        with self._lock:
            self._list(event).append(fn)

    def remove(self, event: str, fn: Callable[..., Any]) -> None:
        with self._lock:
            hooks = self._list(event)
            if fn in hooks:
                hooks.remove(fn)

    def _list(self, event: str) -> list[Any]:
        if event == "pre_tool_call":
            return self._pre
        if event == "post_tool_call":
            return self._post
        raise ValueError(f"unknown hook event {event!r}; use one of {', '.join(HOOK_EVENTS)}")

    def run_pre(self, name: str, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """The arguments after every pre hook; raises `Veto` when one refuses."""
        with self._lock:
            hooks = list(self._pre)
        for fn in hooks:
            try:
                outcome = fn(name, dict(args), ctx)
            except Exception:
                log.exception("pre_tool_call hook %s failed for %s; ignored", _hook_name(fn), name)
                continue
            if isinstance(outcome, str):
                raise Veto(outcome, _hook_name(fn))
            if isinstance(outcome, dict):
                args = outcome
            elif outcome is not None:
                log.warning(
                    "pre_tool_call hook %s returned %s; expected None, a reason or arguments",
                    _hook_name(fn),
                    type(outcome).__name__,
                )
        return args

    def run_post(
        self, name: str, args: dict[str, Any], result: ToolResult, ctx: ToolContext
    ) -> None:
        with self._lock:
            hooks = list(self._post)
        for fn in hooks:
            try:
                fn(name, args, result, ctx)
            except Exception:
                log.exception("post_tool_call hook %s failed for %s; ignored", _hook_name(fn), name)
