"""Session hygiene before a turn: compress a session that grew too big.

A chat session can come back after days with a history near the window (or with an
absurd number of messages); compressing before the turn keeps the first model call
from failing. A compression that raises or cannot shrink the history counts as a
failure and starts a cool-down ladder (`gateway.hygiene.cooldown_seconds`), stored
in the session's meta so a broken summarizer is not retried on every message, not
even across restarts. A success resets the ladder.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from herald.config.schema_gateway import HygieneConfig

log = logging.getLogger(__name__)

META_KEY = "gateway_hygiene"


@dataclass(frozen=True)
class HygieneCheck:
    tokens: int
    window: int
    messages: int
    reason: str | None  # why it must compress; None when it need not

    @property
    def needed(self) -> bool:
        return self.reason is not None


@dataclass(frozen=True)
class HygieneOutcome:
    action: str  # skipped | not_needed | cooling_down | compressed | failed
    detail: str = ""


def measure_session(agent: Any, config: HygieneConfig) -> HygieneCheck:
    """How big the stored history is against the agent's context window."""
    transcript = agent.transcript
    messages = list(transcript.messages) if transcript is not None else []
    tokens = agent.accountant.current(agent.system_prompt or "", messages, agent.tools_chars())
    window = int(
        getattr(agent.context_engine, "context_window", 0)
        or agent.config.context.default_context_window
    )
    reason = None
    if tokens > config.threshold * window:
        reason = f"~{tokens:,} tokens is above {config.threshold:.0%} of the {window:,} window"
    elif len(messages) > config.max_messages:
        reason = f"{len(messages)} messages is above {config.max_messages}"
    return HygieneCheck(tokens, window, len(messages), reason)


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


def _save(agent: Any, state: dict[str, Any] | None) -> None:
    meta = dict(agent.session_meta)
    if state is None:
        meta.pop(META_KEY, None)
    else:
        meta[META_KEY] = state
    agent.store.update_session(agent.session_id, meta=meta)
    agent.session_meta = meta


def run_hygiene(
    agent: Any,
    config: HygieneConfig,
    *,
    notify: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.time,
) -> HygieneOutcome:
    """Compress `agent`'s session first if it is too big (blocking: run it in a worker)."""
    if not config.enabled or agent.session_id is None or agent.transcript is None:
        return HygieneOutcome("skipped")
    now = clock()
    until = cooldown_until(agent.session_meta)
    check = measure_session(agent, config)
    if not check.needed:
        return HygieneOutcome("not_needed")
    if now < until:
        log.info("session %s needs compression but is cooling down", agent.session_id)
        return HygieneOutcome("cooling_down", f"{until - now:.0f} s left")
    log.info("session %s: compressing before the turn (%s)", agent.session_id, check.reason)
    if notify is not None:
        notify("compressing a long conversation first")
    try:
        changed = agent.compress_now()
        error = None if changed else "nothing could be compressed"
    except Exception as exc:  # a broken summarizer or engine: cool down, go on with the turn
        changed, error = False, f"{type(exc).__name__}: {exc}"
    try:
        if changed:
            if agent.session_meta.get(META_KEY):
                _save(agent, None)
            return HygieneOutcome("compressed", check.reason or "")
        state = next_state(agent.session_meta, list(config.cooldown_seconds), now)
        _save(agent, state)
    except Exception as exc:  # the store refused: the turn still runs
        log.error("could not record the hygiene state of %s: %s", agent.session_id, exc)
        return HygieneOutcome("failed", error or str(exc))
    log.warning(
        "pre-turn compression of %s failed (%s); not retrying for %.0f s",
        agent.session_id,
        error,
        state["until"] - now,
    )
    return HygieneOutcome("failed", error or "")


__all__ = [
    "META_KEY",
    "HygieneCheck",
    "HygieneOutcome",
    "cooldown_until",
    "measure_session",
    "next_state",
    "run_hygiene",
]
