"""The built-in `compressor` context engine: Phases 1–4 with a failure cool-down ladder
and a breaker, so a session that cannot shrink stops paying for trying."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from herald.config.schema_context import ContextConfig
from herald.context.compressor.boundaries import (
    bridge_message,
    choose_boundaries,
    is_bridge,
    is_summary,
    strip_bridge,
    text_of,
)
from herald.context.compressor.prune import prune_tool_results
from herald.context.compressor.summary import (
    fallback_sections,
    merge_sections,
    parse_sections,
    sections_of_summary_message,
    summarizer_messages,
    summary_message_text,
)
from herald.context.engine_base import ContextEngine
from herald.context.tokens import estimate_message_tokens
from herald.providers.message import Message

log = logging.getLogger(__name__)

Summarizer = Callable[[list[dict[str, Any]]], str]  # chat messages -> summary text
CHARS_PER_TOKEN = 3.6


@dataclass
class CompressorState:
    """Persisted with the session (survives restarts)."""

    compressions: int = 0
    failures: int = 0
    cooldown_until: float = 0.0
    misses: int = 0  # compressions in a row that did not get below the threshold
    tripped: bool = False
    prune_rearm_at: int = 0
    # A compression that would have saved too little was not applied; do not try again
    # (and pay another summary) until the prompt has grown past this many tokens.
    retry_above: int = 0


@dataclass
class CompressionReport:
    tokens_before: int
    tokens_after: int
    source: str  # model | fallback | cooldown
    compressions: int
    warnings: list[str] = field(default_factory=list)
    reason: str = "threshold"  # fit (the prompt did not fit the window) | threshold | requested

    @property
    def saved_fraction(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0


class CompressorEngine(ContextEngine):
    name = "compressor"

    def __init__(
        self,
        *,
        config: ContextConfig,
        context_window: int,
        summarizer: Summarizer | None = None,
        estimate_message: Callable[[Message], int] = estimate_message_tokens,
        clock: Callable[[], float] = time.time,
    ):
        self.config = config
        self.context_window = context_window
        self.summarizer = summarizer
        self.estimate_message = estimate_message
        self.clock = clock
        self.state = CompressorState()
        self.overhead_tokens = 0  # system prompt + tool schemas, set by the turn engine
        self.last_reported: int | None = None
        self.last_report: CompressionReport | None = None

    # ---- thresholds ---------------------------------------------------------------------

    @property
    def threshold_tokens(self) -> int:
        cfg = self.config
        fraction = (
            cfg.large_window_threshold
            if self.context_window >= cfg.large_window_tokens
            else cfg.threshold
        )
        # A small window cannot give up a fixed 8K to the answer: cap the reserve.
        reserve = min(cfg.output_reserve_tokens, self.context_window // 8)
        return max(1, int(self.context_window * fraction) - reserve)

    @property
    def fit_tokens(self) -> int:
        """The largest prompt that still leaves the answer its reserve in the window."""
        reserve = min(self.config.output_reserve_tokens, self.context_window // 8)
        return max(1, self.context_window - reserve)

    @property
    def tail_budget(self) -> int:
        return min(self.config.tail_tokens, int(self.context_window * self.config.tail_fraction))

    def estimate(self, messages: list[Message]) -> int:
        return self.overhead_tokens + sum(self.estimate_message(m) for m in messages)

    # ---- ContextEngine --------------------------------------------------------------------

    def on_session_start(self, session_id: str, state: dict[str, Any] | None = None) -> None:
        try:
            self.state = CompressorState(**(state or {}))
        except TypeError:
            log.warning("ignoring unreadable compressor state of session %s", session_id)
            self.state = CompressorState()

    def export_state(self) -> dict[str, Any]:
        return asdict(self.state)

    def set_overhead(self, tokens: int) -> None:
        self.overhead_tokens = tokens

    def update_from_response(self, usage: Any) -> None:
        prompt = getattr(usage, "prompt_tokens", None)
        if not prompt:
            return
        self.last_reported = prompt
        if self.state.tripped and prompt < self.threshold_tokens:
            # Only a verified drop in what the provider reports re-arms the breaker.
            self.state.tripped = False
            self.state.misses = 0

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = prompt_tokens if prompt_tokens is not None else self.last_reported
        if tokens is None or self.state.tripped:
            return False
        if tokens < self.fit_tokens and tokens < self.state.retry_above:
            return False  # the last attempt at this size would have saved too little
        return tokens >= self.threshold_tokens

    def tool_result_cap(self, results: int) -> int | None:
        """Tokens each of `results` new tool results may take: their share of the room
        between where a compression lands (`target_fraction` of the threshold) and the
        threshold. Results that fit there never force a compression that cannot shrink
        them (they sit in the protected tail; everything older can be summarized); a
        bigger one is cut by the turn engine instead."""
        room = int(self.threshold_tokens * (1 - self.config.target_fraction))
        return max(self.config.tool_result_min_tokens, room // max(1, results))

    def compress(
        self, messages: list[Message], *, focus: str | None = None, force: bool = False
    ) -> list[Message]:
        self.last_report = None
        before = self.estimate(messages)
        must_fit = before >= self.fit_tokens
        bounds = self._choose_bounds(messages, force=force)
        if bounds is None:
            return messages
        head = messages[: bounds.head_end]
        middle = messages[bounds.head_end : bounds.tail_start]
        tail = messages[bounds.tail_start :]
        if not (force or must_fit) and not self._could_pay(before, middle):
            return messages
        previous = None
        for msg in middle:
            previous = sections_of_summary_message(msg) or previous
        body = [m for m in middle if not is_summary(m) and not is_bridge(m)]
        pruned = prune_tool_results(
            body,
            protect_from=len(body),
            keep_chars=self.config.tool_result_keep_chars,
            argument_max_chars=self.config.tool_argument_max_chars,
        ).messages
        goal = next((text_of(m) for m in head if m.role == "user"), None)
        sections, source = self._summarize(pruned, previous, focus, goal)
        last_user = messages[bounds.last_user]
        task = strip_bridge(text_of(last_user).strip())[:4000] or "none"
        sections["Current task"] = task
        role = "assistant" if head and head[-1].role == "user" else "user"
        rebuilt = [*head, Message(role, summary_message_text(sections))]
        if bounds.move_last_user:
            rebuilt.append(last_user.evolve())  # moved: a new row after the summary
        following = rebuilt[len(head) + 1] if len(rebuilt) > len(head) + 1 else None
        following = following or (tail[0] if tail else None)
        if following is not None and following.role == role:
            # Mid-turn the tail starts with the assistant's next step: two messages of
            # one role in a row are rejected by strict chat templates (invariant 3).
            bridge = bridge_message("user" if role == "assistant" else "assistant", task)
            rebuilt.insert(len(head) + 1, bridge)
        rebuilt.extend(tail)
        after = self.estimate(rebuilt)
        if after >= before or not (force or must_fit or self._pays(before, after)):
            # Never apply a compression that saves nothing (or too little to be worth
            # breaking the cached prefix): the history stays exactly as it was.
            self.state.retry_above = self._retry_line(before, before - after)
            log.info("compression not applied: ~%d -> ~%d tokens saves too little", before, after)
            return messages
        reason = "fit" if must_fit else ("requested" if force else "threshold")
        self._after_compression(before, after, source, reason)
        return rebuilt

    def _pays(self, before: int, after: int) -> bool:
        return before > 0 and (before - after) / before >= self.config.min_saving

    def _could_pay(self, before: int, middle: list[Message]) -> bool:
        """A summary cannot save more than the middle it replaces, less the earlier
        summary it updates (the new one takes its place, about as long): when that is
        under the minimum, skip the summary call altogether."""
        replaceable = sum(self.estimate_message(m) for m in middle)
        earlier = [m for m in middle if is_summary(m)]
        kept_size = self.estimate_message(earlier[-1]) if earlier else 0
        if self._pays(before, before - replaceable + kept_size):
            return True
        self.state.retry_above = self._retry_line(before, replaceable - kept_size)
        return False

    def _retry_line(self, before: int, saving: int) -> int:
        """The prompt size at which a cut that saves `saving` of `before` now would reach
        context.min_saving, counting growth as replaceable (new messages push older ones out
        of the tail); never later than min_saving of growth. A near miss is retried as soon
        as it pays, instead of after the history grew by a fifth with nothing done."""
        share = self.config.min_saving
        needed = (share * before - max(0, saving)) / (1 - share) if share < 1 else before
        return before + max(1, min(int(needed) + 1, int(before * share)))

    def _choose_bounds(self, messages: list[Message], *, force: bool) -> Any:
        """The largest tail whose rebuilt history is predicted to land under the
        threshold; smaller tails are tried before giving up (forced compressions —
        overflow, /compress — always find something to summarize if anything exists)."""
        fallback = None
        for budget in (self.tail_budget, self.tail_budget // 4, 0):
            bounds = choose_boundaries(
                messages, tail_budget_tokens=budget, estimate=self.estimate_message
            )
            if bounds is None:
                continue
            kept = messages[: bounds.head_end] + messages[bounds.tail_start :]
            if bounds.move_last_user:
                kept.append(messages[bounds.last_user])
            predicted = self.estimate(kept) + self.config.summary_max_tokens
            # Land well under the threshold so the session runs a while before the next
            # compression (each one costs a summary call and the cached prefix).
            if predicted < self.threshold_tokens * self.config.target_fraction:
                return bounds
            fallback = bounds
        return fallback if (force or fallback is not None) else None

    def prune_tool_results_only(
        self, messages: list[Message], prompt_tokens: int | None = None
    ) -> list[Message] | None:
        """Proactive Phase 1: read tool output outside the tail becomes one-line stubs,
        rarely, in batches, and only when worth the cache break it costs."""
        cfg = self.config.prune
        if prompt_tokens is None:
            prompt_tokens = self.estimate(messages)
        line, min_reclaim, rearm_growth = self._prune_lines()
        if not cfg.enabled or prompt_tokens < max(line, self.state.prune_rearm_at):
            return None
        # The tail compression keeps, then, once the prompt is past where a compression
        # lands, the narrower tail it falls back to (see _choose_bounds): output that a
        # compression would soon summarize anyway is stubbed instead, with no model call.
        budgets = [self.tail_budget]
        if prompt_tokens >= self.threshold_tokens * self.config.target_fraction:
            budgets.append(self.tail_budget // 4)
        for budget in budgets:
            bounds = choose_boundaries(
                messages, tail_budget_tokens=budget, estimate=self.estimate_message
            )
            if bounds is None:
                # No tail boundary: the whole history is head and tail, and its newest
                # tool results have not been read by the model yet. Nothing is pruned.
                continue
            outcome = prune_tool_results(
                messages,
                protect_from=bounds.tail_start,
                keep_chars=self.config.tool_result_keep_chars,
                argument_max_chars=self.config.tool_argument_max_chars,
            )
            reclaimed = int(outcome.reclaimed_chars / CHARS_PER_TOKEN)
            # The cache breaks where the first stub goes, and the tail after it is read
            # again uncached: a prune that reclaims less than that costs more than it saves.
            if reclaimed >= max(min_reclaim, budget):
                break
        else:
            return None
        self.state.prune_rearm_at = prompt_tokens - reclaimed + rearm_growth
        return outcome.messages

    def _prune_lines(self) -> tuple[int, int, int]:
        """Tokens: the prune line, the least a prune must reclaim, and the growth before the
        next one. The configured amounts suit large windows; where half the compression
        threshold (`above_fraction`) is lower, all three shrink in proportion, so a small
        window prunes before it needs a summary instead of never."""
        cfg = self.config.prune
        line = min(cfg.above_tokens, max(1, int(self.threshold_tokens * cfg.above_fraction)))
        scale = line / cfg.above_tokens
        return (
            line,
            max(1, int(cfg.min_reclaim_tokens * scale)),
            max(1, int(cfg.rearm_growth_tokens * scale)),
        )

    def status(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "context_window": self.context_window,
            "threshold_tokens": self.threshold_tokens,
            "last_reported_prompt_tokens": self.last_reported,
            **self.export_state(),
        }

    # ---- internals ------------------------------------------------------------------------

    def _summarize(
        self,
        messages: list[Message],
        previous: dict[str, str] | None,
        focus: str | None,
        goal: str | None = None,
    ) -> tuple[dict[str, str], str]:
        now = self.clock()
        if self.summarizer is not None and now >= self.state.cooldown_until:
            try:
                text = self.summarizer(
                    summarizer_messages(messages, previous=previous, focus=focus)
                )
                sections = parse_sections(text)
                if sections is None:
                    raise ValueError("the summary did not follow the section template")
                self.state.failures = 0
                return _redacted(sections), "model"
            except Exception as exc:  # the summarizer is best effort; the fallback is not
                self.state.failures += 1
                ladder = self.config.cooldown_seconds or [60.0]
                wait = ladder[min(self.state.failures, len(ladder)) - 1]
                self.state.cooldown_until = now + wait
                log.warning(
                    "summarizer failed (%s); using the fallback summary, cooling down %.0f s",
                    exc,
                    wait,
                )
            source = "fallback"
        else:
            source = "cooldown" if self.summarizer is not None else "fallback"
        fallback = fallback_sections(messages, goal=goal)
        return _redacted(merge_sections(previous, fallback)), source

    def _after_compression(self, before: int, after: int, source: str, reason: str) -> None:
        self.state.compressions += 1
        self.state.retry_above = 0
        # The prune re-arm line was measured on the history this compression replaced.
        self.state.prune_rearm_at = 0
        if after >= self.threshold_tokens:
            self.state.misses += 1
            if self.state.misses >= 2:
                self.state.tripped = True
        else:
            self.state.misses = 0
        warnings = []
        if self.state.tripped:
            warnings.append(
                "compression could not bring this session under its limit twice in a row; "
                "automatic compression is paused until usage drops (/new starts fresh)"
            )
        if self.state.compressions >= self.config.warn_after_compressions:
            warnings.append(
                f"this session has been compressed {self.state.compressions} times; details "
                "from early on may be less accurate (/new starts fresh)"
            )
        self.last_report = CompressionReport(
            before, after, source, self.state.compressions, warnings, reason
        )


def _redacted(sections: dict[str, str]) -> dict[str, str]:
    from herald.safety import redact

    return {name: redact(text) for name, text in sections.items()}
