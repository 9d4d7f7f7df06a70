"""Context pressure: keep the history under the model's window.

Checked in the turn prologue, before each model request and after each tool
batch (DESIGN "One message, end to end"). Proactive pruning (Phase 1 only,
off by default) runs first because it is cheap; the context engine's full
compression runs when the estimate crosses its threshold, and once more,
forced, when the provider says the context overflowed. Every compression
archives the replaced rows and tells the user what it saved.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from herald.context import estimate_text_tokens
from herald.context.compressor.boundaries import SUMMARY_MARK
from herald.engine.session import save_meta
from herald.providers.message import Message

if TYPE_CHECKING:
    from herald.engine.turn_context import TurnContext

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3.6  # the estimate the context package uses for schemas


def current_tokens(ctx: TurnContext) -> int:
    prompt = ctx.session.system_prompt
    assert prompt is not None
    return ctx.accountant.current(prompt, ctx.transcript.api_messages(), ctx.tools.chars)


def relieve_pressure(ctx: TurnContext) -> bool:
    """Prune or compress if the history is too big; True when the history changed."""
    if ctx.session.system_prompt is None:
        return False
    tokens = current_tokens(ctx)
    changed = False
    messages = list(ctx.transcript.messages)
    pruned = ctx.context_engine.prune_tool_results_only(messages, prompt_tokens=tokens)
    if pruned is not None and pruned is not messages:
        archived = ctx.transcript.replace(pruned)
        if archived:
            ctx.accountant.reset()
            ctx.callbacks.status(f"pruned old tool output ({archived} messages shortened)")
            changed = True
            tokens = current_tokens(ctx)
    if ctx.context_engine.should_compress(prompt_tokens=tokens):
        changed = compress_history(ctx) or changed
    return changed


def compress_history(
    ctx: TurnContext, *, focus: str | None = None, force: bool = False, reason: str | None = None
) -> bool:
    """Run the context engine's compression and make its result the history. `reason`
    names why a forced compression ran (``fit`` after an overflow, ``requested``)."""
    engine = ctx.context_engine
    set_overhead(ctx)
    before = list(ctx.transcript.messages)
    after = engine.compress(before, focus=focus, force=force)
    if after is None or after is before:
        return False
    after = _keep_provider_notes(ctx, before, ctx.transcript.adopt(after))
    archived = ctx.transcript.replace(after)
    if not archived:
        return False
    ctx.accountant.reset()
    save_meta(ctx.runtime)
    report = engine.last_report
    if report is not None:
        ctx.callbacks.status(
            f"compressed the conversation ({reason or report.reason}): "
            f"~{report.tokens_before:,} → ~{report.tokens_after:,} tokens "
            f"(saved {report.saved_fraction:.0%}, {archived} messages archived)"
        )
        for warning in report.warnings:
            ctx.callbacks.status(warning)
    else:
        ctx.callbacks.status(f"compressed the conversation ({archived} messages archived)")
    log.info("session %s compressed: %d rows archived", ctx.session.id, archived)
    ctx.hooks.emit(
        "on_compress", ctx.callbacks.status, session_id=ctx.session.id, archived=archived
    )
    return True


def set_overhead(ctx: TurnContext) -> bool:
    """Tell the context engine what every request carries besides the history (the
    frozen system prompt and the tool schemas); False before the prompt exists."""
    prompt = ctx.session.system_prompt
    if prompt is None:
        return False
    overhead = estimate_text_tokens(prompt) + int(ctx.tools.chars / CHARS_PER_TOKEN)
    ctx.context_engine.set_overhead(overhead)
    return True


def _keep_provider_notes(
    ctx: TurnContext, before: list[Message], after: list[Message]
) -> list[Message]:
    """A memory provider may name text that must survive the compression; it joins the
    new summary (a new row, so nothing stored is edited). The provider is shown the
    history as chat dicts, its public contract."""
    if ctx.memory is None:
        return after
    notes = ctx.memory.on_pre_compress([m.to_api() for m in before])
    if not notes:
        return after
    for i, message in enumerate(after):
        text = message.content if isinstance(message.content, str) else ""
        if message.row_id is None and text.startswith(SUMMARY_MARK):
            kept = f"{text}\n\n## Kept by the memory provider\n{notes.strip()}"
            return [*after[:i], message.evolve(content=kept), *after[i + 1 :]]
    return after
