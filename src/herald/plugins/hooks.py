"""`HookRunner`: the plugin hooks of one agent (or gateway), called at named points.

A hook is ``fn(**payload)``; it is given only the payload keys its signature
names (or all of them with ``**kwargs``), so ``def add(user_text): ...`` works.
Hooks of one event run in priority order (higher first, then registration
order). Each runs on its own daemon thread with a time limit: a hook that
raises or runs past ``plugins.hook_timeout_seconds`` is logged, reported once
through ``notify`` and skipped — the turn goes on. Except ``pre_tool_call``:
those hooks are policy (they may refuse a call), so one that raises or times out
refuses the call, naming the plugin (fail closed): a guard that cannot answer
must not be the way a call gets through.

What a return value may do:

- ``pre_llm_call``: a non-empty ``str`` is context for the user message's API
  copy (never the system prompt, which stays frozen);
- ``pre_tool_call``: a ``str`` (or `Deny`) refuses the call with that reason;
  anything else lets it through. A hook can refuse, never approve: the
  approval layer runs inside the tool after the hooks and decides on its own;
- every other event: ignored (observers).

`NO_HOOKS` is the empty runner every agent has until plugins add some.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

HOOK_EVENTS: tuple[str, ...] = (
    "on_session_start",
    "on_session_end",
    "pre_llm_call",
    "post_llm_call",
    "pre_tool_call",
    "post_tool_call",
    "on_turn_complete",
    "on_compress",
    "on_message_received",
    "on_message_sent",
)
DEFAULT_TIMEOUT = 5.0

Notify = Callable[[str], None]


@dataclass(frozen=True)
class Deny:
    """A `pre_tool_call` hook's refusal (returning the reason as a str does the same)."""

    reason: str


@dataclass(frozen=True)
class Hook:
    event: str
    fn: Callable[..., Any]
    plugin: str
    priority: int = 0
    order: int = 0

    @property
    def label(self) -> str:
        name = getattr(self.fn, "__qualname__", None) or repr(self.fn)
        return f"{self.plugin}:{name}"


def check_event(event: str) -> None:
    if event not in HOOK_EVENTS:
        raise ValueError(f"unknown hook event {event!r}; use one of {', '.join(HOOK_EVENTS)}")


@dataclass(eq=False)  # identity: one runner per plugin set
class HookRunner:
    hooks: tuple[Hook, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    # Problems already reported (one message per hook and kind, not one per call).
    _reported: set[tuple[str, str]] = field(default_factory=set, repr=False)
    _started: set[str] = field(default_factory=set, repr=False)

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def for_event(self, event: str) -> list[Hook]:
        chosen = [h for h in self.hooks if h.event == event]
        return sorted(chosen, key=lambda h: (-h.priority, h.order))

    def emit(self, event: str, notify: Notify | None = None, **payload: Any) -> list[Any]:
        """Call every hook of `event`; the values of those that returned in time."""
        if not self.hooks:
            return []
        values: list[Any] = []
        for hook in self.for_event(event):
            ok, value = self._call(hook, payload, notify)
            if ok:
                values.append(value)
        return values

    # ---- the named points -------------------------------------------------------------------

    def context_for(self, notify: Notify | None = None, **payload: Any) -> list[str]:
        """`pre_llm_call`: the context strings hooks want on the user message's API copy."""
        return [v.strip() for v in self.emit("pre_llm_call", notify, **payload) if _text(v)]

    def tool_denial(
        self, name: str, args: dict[str, Any], notify: Notify | None = None
    ) -> str | None:
        """`pre_tool_call`: the first refusal's reason (naming the hook), else None. A
        hook that raised or ran out of time refuses too (it may have been about to)."""
        if not self.hooks:
            return None
        for hook in self.for_event("pre_tool_call"):
            ok, value = self._call(hook, {"name": name, "args": dict(args)}, notify)
            if not ok:
                return (
                    f"refused by plugin {hook.plugin!r}: its pre_tool_call hook {hook.label} "
                    f"{value}, and a tool guard that cannot "
                    "answer refuses (fail closed). The owner can fix or disable the plugin "
                    f"(`herald plugins disable {hook.plugin}`); do not retry meanwhile"
                )
            reason = value.reason if isinstance(value, Deny) else value
            if isinstance(reason, str):
                reason = reason.strip() or "no reason given"
                return f"refused by plugin hook {hook.label}: {reason}"
        return None

    def session_started(self, session_id: str, notify: Notify | None = None) -> None:
        """`on_session_start`, once per session id (the first turn an agent runs on it)."""
        if not self.hooks or session_id in self._started:
            return
        self._started.add(session_id)
        self.emit("on_session_start", notify, session_id=session_id)

    # ---- running one hook ---------------------------------------------------------------------

    def _call(self, hook: Hook, payload: dict[str, Any], notify: Notify | None) -> tuple[bool, Any]:
        outcome = run_limited(hook.fn, payload, self.timeout, name=f"herald-hook-{hook.event}")
        if outcome.timed_out:
            self._report(
                hook,
                "timeout",
                f"plugin hook {hook.label} ({hook.event}) took longer than {self.timeout:g} s "
                f"and {_consequence(hook)}; fix the plugin or raise plugins.hook_timeout_seconds",
                notify,
            )
            return False, f"did not answer within {self.timeout:g} s"
        if outcome.error is not None:
            exc = outcome.error
            log.debug("hook %s raised", hook.label, exc_info=exc)
            self._report(
                hook,
                "error",
                f"plugin hook {hook.label} ({hook.event}) failed and {_consequence(hook)}: "
                f"{type(exc).__name__}: {exc}",
                notify,
            )
            return False, f"raised {type(exc).__name__}: {_short(str(exc))}"
        return True, outcome.value

    def _report(self, hook: Hook, kind: str, message: str, notify: Notify | None) -> None:
        log.warning("%s", message)
        key = (hook.label + hook.event, kind)
        if key in self._reported:
            return
        self._reported.add(key)
        if notify is not None:
            try:
                notify(message)
            except Exception:  # a surface callback must not break the turn either
                log.debug("notify failed", exc_info=True)


CONTEXT_OPEN = "<plugin-context>"
CONTEXT_CLOSE = "</plugin-context>"


def with_context(api_text: str, contexts: list[str]) -> str:
    """The user message's API copy with the hooks' context fenced on after it."""
    if not contexts:
        return api_text
    body = "\n\n".join(contexts)
    return f"{api_text}\n\n{CONTEXT_OPEN}\n{body}\n{CONTEXT_CLOSE}"


@dataclass(frozen=True)
class Outcome:
    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False


def run_limited(
    fn: Callable[..., Any], payload: dict[str, Any], timeout: float, *, name: str
) -> Outcome:
    """``fn`` with the payload keys it accepts, on a daemon thread, waited for at most
    `timeout` seconds (a plugin's code: it may raise or hang, and neither reaches us)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(**_accepted(fn, payload))
        except BaseException as exc:  # a plugin bug: reported by the caller, never raised
            box["error"] = exc

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return Outcome(timed_out=True)
    return Outcome(box.get("value"), box.get("error"))


def _consequence(hook: Hook) -> str:
    return "the tool call was refused" if hook.event == "pre_tool_call" else "was skipped"


def _short(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _accepted(fn: Callable[..., Any], payload: dict[str, Any]) -> dict[str, Any]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return payload
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return payload
    return {k: v for k, v in payload.items() if k in params}


NO_HOOKS = HookRunner()

__all__ = [
    "CONTEXT_CLOSE",
    "CONTEXT_OPEN",
    "DEFAULT_TIMEOUT",
    "HOOK_EVENTS",
    "NO_HOOKS",
    "Deny",
    "Hook",
    "HookRunner",
    "Outcome",
    "check_event",
    "run_limited",
    "with_context",
]
