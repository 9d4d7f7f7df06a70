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

from herald.context import call_optional

if TYPE_CHECKING:
    from herald.engine.agent import Agent

log = logging.getLogger(__name__)


def current_tokens(agent: Agent) -> int:
    assert agent.system_prompt is not None and agent.transcript is not None
    return agent.accountant.current(
        agent.system_prompt, agent.transcript.messages, agent.tools_chars()
    )


def relieve_pressure(agent: Agent) -> bool:
    """Prune or compress if the history is too big; True when the history changed."""
    if agent.transcript is None or agent.system_prompt is None:
        return False
    tokens = current_tokens(agent)
    changed = False
    pruned = call_optional(
        agent.context_engine,
        "prune_tool_results_only",
        messages=agent.transcript.messages,
        prompt_tokens=tokens,
    )
    if pruned is not None and pruned is not agent.transcript.messages:
        archived = agent.transcript.replace(pruned)
        if archived:
            agent.accountant.reset()
            agent.callbacks.status(f"pruned old tool output ({archived} messages shortened)")
            changed = True
            tokens = current_tokens(agent)
    if agent.context_engine.should_compress(prompt_tokens=tokens):
        changed = compress_history(agent) or changed
    return changed


def compress_history(agent: Agent, *, focus: str | None = None, force: bool = False) -> bool:
    """Run the context engine's compression and make its result the history."""
    if agent.transcript is None:
        return False
    engine = agent.context_engine
    _set_overhead(agent)
    before = agent.transcript.messages
    after = call_optional(engine, "compress", messages=before, focus=focus, force=force)
    if after is None or after is before:
        return False
    _keep_provider_notes(agent, before, after)
    archived = agent.transcript.replace(after)
    if not archived:
        return False
    agent.accountant.reset()
    agent.save_session_meta()
    report = getattr(engine, "last_report", None)
    if report is not None:
        agent.callbacks.status(
            f"compressed the conversation: ~{report.tokens_before:,} → ~{report.tokens_after:,} "
            f"tokens (saved {report.saved_fraction:.0%}, {archived} messages archived)"
        )
        for warning in report.warnings:
            agent.callbacks.status(warning)
    else:
        agent.callbacks.status(f"compressed the conversation ({archived} messages archived)")
    log.info("session %s compressed: %d rows archived", agent.session_id, archived)
    return True


def _set_overhead(agent: Agent) -> None:
    """The compressor measures its result including what every request carries."""
    if hasattr(agent.context_engine, "overhead_tokens") and agent.system_prompt is not None:
        from herald.context import estimate_text_tokens

        agent.context_engine.overhead_tokens = estimate_text_tokens(agent.system_prompt) + int(
            agent.tools_chars() / 3.6
        )


def _keep_provider_notes(agent: Agent, before: list, after: list) -> None:
    """A memory provider may name text that must survive the compression; it joins the
    new summary (a new row, so nothing stored is edited)."""
    from herald.context import ROW_ID

    if agent.memory is None:
        return
    notes = agent.memory.on_pre_compress(before)
    if not notes:
        return
    for message in after:
        if ROW_ID not in message and (message.get("content") or "").startswith("[Context summary"):
            message["content"] += f"\n\n## Kept by the memory provider\n{notes.strip()}"
            return
