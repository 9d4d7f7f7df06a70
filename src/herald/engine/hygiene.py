"""Session hygiene, a prologue policy: compress a session that grew too big between turns.

A chat session can come back after days with a history near the window (or with an
absurd number of messages); compressing before the turn keeps the first model call
from failing. A surface opts in with `AgentOptions.hygiene` (the gateway does, with
`gateway.hygiene`). A compression that raises or cannot shrink the history counts as
a failure and starts a cool-down ladder (`cooldown_seconds`), stored in the session's
meta so a broken summarizer is not retried on every message, not even across
restarts. A success resets the ladder. `context_status` gives surfaces the numbers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.engine.pressure import compress_history
from herald.engine.session import update_meta

if TYPE_CHECKING:
    from herald.config.schema_gateway import HygieneConfig
    from herald.engine.turn_context import SessionRuntime, TurnContext

log = logging.getLogger(__name__)

META_KEY = "gateway_hygiene"


@dataclass(frozen=True)
class ContextStatus:
    """How full the session's context is (what `Agent.context_status()` returns)."""

    tokens: int  # estimated prompt tokens of the next request
    window: int  # the active model's context window
    messages: int  # messages in the active history

    @property
    def fraction(self) -> float:
        return self.tokens / self.window if self.window else 0.0


@dataclass(frozen=True)
class HygieneOutcome:
    action: str  # skipped | not_needed | cooling_down | compressed | failed
    detail: str = ""


def context_status(rt: SessionRuntime, tools_chars: int) -> ContextStatus:
    transcript = rt.state.transcript
    messages = transcript.api_messages() if transcript is not None else []
    tokens = rt.accountant.current(rt.state.system_prompt or "", messages, tools_chars)
    window = int(rt.context_engine.context_window or rt.config.context.default_context_window)
    return ContextStatus(tokens, window, len(messages))


def needs_compression(status: ContextStatus, config: HygieneConfig) -> str | None:
    """Why the session must compress before the turn; None when it need not."""
    if status.tokens > config.threshold * status.window:
        return (
            f"~{status.tokens:,} tokens is above {config.threshold:.0%} "
            f"of the {status.window:,} window"
        )
    if status.messages > config.max_messages:
        return f"{status.messages} messages is above {config.max_messages}"
    return None


def cooldown_until(meta: dict[str, Any]) -> float:
    state = meta.get(META_KEY) or {}
    try:
        return float(state.get("until", 0.0))
    except (TypeError, ValueError):
        return 0.0


def next_state(meta: dict[str, Any], ladder: list[float], now: float) -> dict[str, Any]:
    """The hygiene state after one more failure."""
    state = meta.get(META_KEY) or {}
    failures = int(state.get("failures", 0)) + 1
    steps = ladder or [300.0]
    wait = steps[min(failures, len(steps)) - 1]
    return {"failures": failures, "until": now + wait, "last_failure": now}


def run_hygiene(
    ctx: TurnContext, config: HygieneConfig, *, clock: Callable[[], float] = time.time
) -> HygieneOutcome:
    """Compress the session first if it is too big (before the user's message joins)."""
    if not config.enabled or ctx.session.id is None:
        return HygieneOutcome("skipped")
    session_id = ctx.session.id
    now = clock()
    until = cooldown_until(ctx.session.meta)
    reason = needs_compression(context_status(ctx.runtime, ctx.tools.chars), config)
    if reason is None:
        return HygieneOutcome("not_needed")
    if now < until:
        log.info("session %s needs compression but is cooling down", session_id)
        return HygieneOutcome("cooling_down", f"{until - now:.0f} s left")
    log.info("session %s: compressing before the turn (%s)", session_id, reason)
    ctx.callbacks.status("compressing a long conversation first")
    try:
        changed = compress_history(ctx, force=True, reason="threshold")
        error = None if changed else "nothing could be compressed"
    except Exception as exc:  # a broken summarizer or engine: cool down, go on with the turn
        changed, error = False, f"{type(exc).__name__}: {exc}"
    try:
        if changed:
            if ctx.session.meta.get(META_KEY):
                update_meta(ctx.runtime, {META_KEY: None})
            return HygieneOutcome("compressed", reason)
        state = next_state(ctx.session.meta, list(config.cooldown_seconds), now)
        update_meta(ctx.runtime, {META_KEY: state})
    except Exception as exc:  # the store refused: the turn still runs
        log.error("could not record the hygiene state of %s: %s", session_id, exc)
        return HygieneOutcome("failed", error or str(exc))
    log.warning(
        "pre-turn compression of %s failed (%s); not retrying for %.0f s",
        session_id,
        error,
        state["until"] - now,
    )
    return HygieneOutcome("failed", error or "")


__all__ = [
    "META_KEY",
    "ContextStatus",
    "HygieneOutcome",
    "context_status",
    "cooldown_until",
    "needs_compression",
    "next_state",
    "run_hygiene",
]
