"""`pre_tool_call` / `post_tool_call` hooks around every dispatched tool call.

A pre hook is called as ``fn(name, args, ctx)`` and returns:

- None: go on unchanged;
- a ``str``: veto — the call does not run and the model gets that reason as an error;
- a ``dict``: the arguments to use instead (a rewrite).

A post hook is called as ``fn(name, args, result, ctx)`` and only observes.
A post hook that raises is logged and skipped; it never breaks the call. A pre
hook is a guard, so one that raises refuses the call (fail closed), naming it. Internal
calls pass ``run_hooks=False`` to `ToolRegistry.dispatch` to bypass them.

The hooks hand the call's context and result through without reading them, so
this module is generic in both: the registry (which imports this module) supplies
`ToolContext` and `ToolResult`, and nothing here imports the registry back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

log = logging.getLogger(__name__)

HookEvent = Literal["pre_tool_call", "post_tool_call"]
HOOK_EVENTS: tuple[str, ...] = ("pre_tool_call", "post_tool_call")

Ctx = TypeVar("Ctx")  # the registry's ToolContext
Res = TypeVar("Res")  # the registry's ToolResult

PreToolHook = Callable[[str, dict[str, Any], Ctx], "str | dict[str, Any] | None"]
PostToolHook = Callable[[str, dict[str, Any], Res, Ctx], None]


class Veto(Exception):
    """Raised internally when a pre hook refuses a call; carries the reason."""

    def __init__(self, reason: str, hook: str):
        super().__init__(reason)
        self.reason = reason
        self.hook = hook


def _hook_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


class ToolHooks(Generic[Ctx, Res]):
    def __init__(self) -> None:
        self._pre: list[PreToolHook[Ctx]] = []
        self._post: list[PostToolHook[Res, Ctx]] = []
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

    def run_pre(self, name: str, args: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        """The arguments after every pre hook; raises `Veto` when one refuses."""
        with self._lock:
            hooks = list(self._pre)
        for fn in hooks:
            try:
                outcome = fn(name, dict(args), ctx)
            except Exception as exc:
                log.exception("pre_tool_call hook %s failed for %s; refused", _hook_name(fn), name)
                raise Veto(
                    f"the pre_tool_call hook {_hook_name(fn)} failed ({type(exc).__name__}: {exc}), "
                    "and a guard that cannot answer refuses (fail closed)",
                    _hook_name(fn),
                ) from exc
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

    def run_post(self, name: str, args: dict[str, Any], result: Res, ctx: Ctx) -> None:
        with self._lock:
            hooks = list(self._post)
        for fn in hooks:
            try:
                fn(name, args, result, ctx)
            except Exception:
                log.exception("post_tool_call hook %s failed for %s; ignored", _hook_name(fn), name)
