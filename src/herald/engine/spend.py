"""The spend governor: checked before every model call (invariant 15).

`before_model_call` measures the request (see economics.py), tells the user once
when the provider's reusable prefix broke, warns at the configured fractions of a
cap (once each per period, claimed in the store so processes agree), and refuses
the call when its estimated cost would take any `budget` cap past its limit. A
refused call returns the sentence the user sees; the turn then ends with
`spend_limit_reached`, nothing it stored is lost, and the session goes on as
soon as the cap allows (a new day, month or session, or a raised cap).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.engine.economics import PrefixTracker, RequestSplit

if TYPE_CHECKING:
    from herald.config import BudgetConfig, HeraldConfig
    from herald.engine.turn_context import TurnContext
    from herald.engine.turn_state import TurnState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cap:
    key: str  # the config key, e.g. "budget.daily_usd"
    limit: float
    unit: str  # "usd" | "tokens"
    scope: str  # "today", "this month", "this session", "this turn"
    period: str  # warnings are given once per (key, period, threshold)
    since: float | None
    session_id: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class CallEstimate:
    cost_usd: float
    tokens: int


def _day_start(now: float) -> float:
    t = time.localtime(now)
    return time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0, 0, 0, -1))


def _month_start(now: float) -> float:
    t = time.localtime(now)
    return time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1))


def active_caps(
    budget: BudgetConfig, *, session_id: str, source: str, turn_started: float, now: float
) -> list[Cap]:
    day, month = _day_start(now), _month_start(now)
    day_key, month_key = (
        time.strftime("%Y-%m-%d", time.localtime(now)),
        time.strftime("%Y-%m", time.localtime(now)),
    )
    turn_key = f"{session_id}@{turn_started:.6f}"
    caps: list[Cap] = []

    def add(key: str, limit: float | None, unit: str, scope: str, period: str, **where: Any):
        if limit is not None:
            caps.append(Cap(key, float(limit), unit, scope, period, **where))

    for unit in ("usd", "tokens"):
        add(f"budget.daily_{unit}", getattr(budget, f"daily_{unit}"), unit, "today", day_key,
            since=day)  # fmt: skip
        add(f"budget.monthly_{unit}", getattr(budget, f"monthly_{unit}"), unit, "this month",
            month_key, since=month)  # fmt: skip
        add(f"budget.session_{unit}", getattr(budget, f"session_{unit}"), unit, "this session",
            session_id, since=None, session_id=session_id)  # fmt: skip
        add(f"budget.turn_{unit}", getattr(budget, f"turn_{unit}"), unit, "this turn", turn_key,
            since=turn_started, session_id=session_id)  # fmt: skip
    per_source = budget.per_source.get(source)
    if per_source is not None:
        base = f"budget.per_source.{source}"
        for unit in ("usd", "tokens"):
            add(f"{base}.daily_{unit}", getattr(per_source, f"daily_{unit}"), unit,
                f"today on {source}", day_key, since=day, source=source)  # fmt: skip
            add(f"{base}.monthly_{unit}", getattr(per_source, f"monthly_{unit}"), unit,
                f"this month on {source}", month_key, since=month, source=source)  # fmt: skip
    return caps


def estimate_call(ctx: TurnContext, split: RequestSplit) -> CallEstimate:
    """An upper estimate of the call about to be made: every prompt token at the full
    input price (a cache hit only makes it cheaper) and the assumed completion."""
    from herald.providers import price_for

    cfg = ctx.config
    output = cfg.budget.output_estimate_tokens
    if cfg.model.max_tokens is not None:
        output = min(output, cfg.model.max_tokens)
    prompt = split.estimated_tokens
    provider, model = ctx.client.identity()
    price = price_for(provider, model, cfg)
    cost = 0.0 if price is None else (prompt * price.input + output * price.output) / 1e6
    return CallEstimate(cost, prompt + output)


def _money(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def _amount(cap: Cap, value: float) -> str:
    return _money(value) if cap.unit == "usd" else f"{int(value):,} tokens"


def refusal(cap: Cap, spent: float, estimate: float) -> str:
    return (
        f"Spend limit reached: {cap.key} is {_amount(cap, cap.limit)} and "
        f"{_amount(cap, spent)} was spent {cap.scope}; the next model call would add about "
        f"{_amount(cap, estimate)}. Nothing was lost: this conversation is saved and goes on "
        f"when you write again once the cap allows. To raise the cap: "
        f"herald config set {cap.key} <amount> (or edit config.yaml)."
    )


def _warn(ctx: TurnContext, turn: TurnState, cap: Cap, spent: float) -> None:
    if cap.limit <= 0:
        return
    ratio = spent / cap.limit
    crossed = sorted(t for t in ctx.config.budget.warn_at if 0 < t <= ratio)
    fresh = [t for t in crossed if _claim(ctx, turn, cap, t)]
    if fresh:
        ctx.callbacks.status(
            f"spend: {round(ratio * 100)}% of {cap.key} used {cap.scope} "
            f"({_amount(cap, spent)} of {_amount(cap, cap.limit)})"
        )


def _claim(ctx: TurnContext, turn: TurnState, cap: Cap, threshold: float) -> bool:
    if cap.key.startswith("budget.turn_"):  # a turn's warnings live and die with it
        mark = (cap.key, threshold)
        if mark in turn.spend_warnings:
            return False
        turn.spend_warnings.add(mark)
        return True
    return ctx.store.claim_spend_warning(cap.key, cap.period, threshold)


def _standing(store: Any, caps: list[Cap], estimate: CallEstimate):
    """(cap, spent, this call's share) for each cap, in order."""
    for cap in caps:
        spent_row = store.spent_since(cap.since, session_id=cap.session_id, source=cap.source)
        spent = spent_row.cost_usd if cap.unit == "usd" else float(spent_row.tokens)
        extra = estimate.cost_usd if cap.unit == "usd" else float(estimate.tokens)
        yield cap, spent, extra


def check_caps(ctx: TurnContext, turn: TurnState, split: RequestSplit) -> str | None:
    """None when the call may go ahead; else the sentence that tells the user why not."""
    budget = ctx.config.budget
    if not budget.any_cap():
        return None
    caps = active_caps(
        budget,
        session_id=ctx.session_id,
        source=ctx.options.source,
        turn_started=turn.started_at,
        now=time.time(),
    )
    for cap, spent, extra in _standing(ctx.store, caps, estimate_call(ctx, split)):
        if spent + extra > cap.limit:
            log.warning("spend cap %s reached: %.6f spent of %.6f", cap.key, spent, cap.limit)
            turn.spend_cap = cap.key
            return refusal(cap, spent, extra)
        _warn(ctx, turn, cap, spent)
    return None


class SideCallRefused(RuntimeError):
    """A side job (a summary, a smart-approval verdict) was not run: a spending cap."""


def check_side_call(
    config: HeraldConfig,
    store: Any,
    *,
    session_id: str | None,
    source: str,
    endpoint: tuple[str, str],
    prompt_chars: int,
    max_output: int,
) -> str | None:
    """The same check for a side job outside the turn loop (a compression's summary):
    the refusal, or None to go ahead. Turn caps do not see side jobs."""
    from herald.providers import price_for

    if session_id is None or not config.budget.any_cap():
        return None
    now = time.time()
    everything = active_caps(
        config.budget, session_id=session_id, source=source, turn_started=now, now=now
    )
    caps = [c for c in everything if not c.key.startswith("budget.turn_")]
    prompt = prompt_chars // 4 + 1
    price = price_for(*endpoint, config)
    cost = 0.0 if price is None else (prompt * price.input + max_output * price.output) / 1e6
    for cap, spent, extra in _standing(store, caps, CallEstimate(cost, prompt + max_output)):
        if spent + extra > cap.limit:
            return refusal(cap, spent, extra)
    return None


def before_model_call(
    ctx: TurnContext,
    turn: TurnState,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
) -> str | None:
    """Measure the request, report a broken prefix once, and check the caps. Returns
    None to go ahead, or the refusal the turn ends with."""
    session = ctx.session
    if session.prefix is None:
        session.prefix = PrefixTracker()
    split, tell = session.prefix.observe(messages, tools, rewrites=ctx.transcript.rewrites)
    turn.request_split = split
    if tell is not None:
        ctx.callbacks.status(
            f"cache: {tell} since the previous request, so the provider re-reads the whole "
            "prompt this time (costs more once)"
        )
    return check_caps(ctx, turn, split)


__all__ = ["Cap", "active_caps", "before_model_call", "check_caps", "check_side_call", "refusal"]
