"""The taint check in the tool round (DESIGN invariant 18; the rule is
herald.safety.taint, the labels herald.engine.provenance).

Before a consequential call, the arguments its tool declares as controls are checked
against this session's evidence: the system prompt and every stored row (archived ones
too, so a compression loses nothing of who said what), except the model's own messages.
Attended, the owner is asked through the same approval prompt, callback and timeout as a
dangerous command, and an approval makes the value the owner's for the rest of the
session; unattended, the call is refused with the reason. ``trust.enforce: false`` turns
the check off (provenance is still recorded and untrusted content still fenced).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from herald.engine.images import images_seen
from herald.safety.provenance import OWNER, is_untrusted
from herald.safety.taint import (
    Evidence,
    EvidenceIndex,
    Taint,
    decide_taint,
    find_taint,
    refusal_text,
    resolve_taint,
)
from herald.tools import ToolContext, ToolResult, ToolSpec, coerce_arguments, sanitize_error

if TYPE_CHECKING:
    from herald.config import HeraldConfig
    from herald.engine.turn_context import TurnContext
    from herald.providers import ToolCall

log = logging.getLogger(__name__)


@dataclass
class OwnerApprovals:
    """Values the owner approved in this session (they count as the owner's words), and
    the stored rows already normalised for the check (by row id: rows never change)."""

    texts: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    normalised_rows: dict[int, str] = field(default_factory=dict, repr=False)


def session_evidence(ctx: TurnContext) -> list[Evidence]:
    """Everything this session has seen, oldest first: the system prompt, every stored row
    (archived ones included, so a compression does not lose who said what) except the
    model's own messages, then the values the owner approved."""
    evidence: list[Evidence] = []
    accounts = owner_accounts(ctx.tool_context.config)
    if accounts:  # the owner's own addresses are the owner's words wherever they show up
        evidence.append(Evidence(" ".join(accounts), OWNER))
    # A reviewer or sub-agent works from its parent's conversation: the parent's evidence
    # (and its parent's) comes first, so a value copied from the parent's untrusted
    # content into the child's task is still untrusted in the child.
    for session_id in reversed(_lineage(ctx)):
        evidence.extend(_rows(ctx, session_id))
    if ctx.session.system_prompt:
        evidence.append(Evidence(ctx.session.system_prompt, "trusted"))
    evidence.extend(_with_images(ctx, _rows(ctx, ctx.session_id)))
    approvals = ctx.tool_context.own(OwnerApprovals).texts
    evidence.extend(Evidence(text, OWNER) for text in approvals)
    return evidence


MAX_ANCESTORS = 4


def owner_accounts(config: HeraldConfig | None) -> list[str]:
    """The user ids of the owner's accounts (`identities.owner.accounts`, e.g.
    ``email:ana@home.example`` gives ``ana@home.example``)."""
    if config is None:
        return []
    owner = config.identities.get("owner")
    if owner is None:
        return []
    return [account.partition(":")[2].strip() for account in owner.accounts]


def _lineage(ctx: TurnContext) -> list[str]:
    """The ancestors of this session, nearest first (a review of a sub-agent's session
    reaches its grandparent)."""
    found: list[str] = []
    parent = ctx.options.parent_session_id
    while parent and parent not in found and len(found) < MAX_ANCESTORS:
        found.append(parent)
        record = ctx.store.get_session(parent)
        parent = getattr(record, "parent_id", None) if record is not None else None
    return found


def _rows(ctx: TurnContext, session_id: str) -> list[Evidence]:
    """A session's stored rows as evidence, archived ones included, the model's own left
    out (a model repeating a value proves nothing either way)."""
    try:
        rows = ctx.store.get_messages(session_id, include_inactive=True)
    except Exception:  # an ancestor in another profile's store: its own check held there
        log.debug("no evidence from session %s", session_id, exc_info=True)
        return []
    return [
        Evidence(row.content, getattr(row, "provenance", "trusted"), row.id)
        for row in rows
        if row.role != "assistant" and isinstance(row.content, str)
    ]


def _with_images(ctx: TurnContext, rows: list[Evidence]) -> list[Evidence]:
    """`rows` with, after each row whose untrusted images the model was shown (a
    member's photo, a page's screenshot), opaque evidence from the same source."""
    seen = images_seen(ctx)
    if not seen:
        return rows
    out: list[Evidence] = []
    for row in rows:
        out.append(row)
        if row.row_id in seen:
            source = seen[row.row_id] or row.provenance
            if is_untrusted(source):
                out.append(Evidence.image(source))
    return out


def _arguments(spec: ToolSpec, call: ToolCall) -> dict[str, Any] | None:
    from herald.tools import parse_arguments

    try:
        args = parse_arguments(call.arguments)
    except ValueError:
        return None  # the registry reports bad JSON itself; nothing runs
    return coerce_arguments(args, spec.schema.get("parameters"))


def taint_gate(ctx: TurnContext, call: ToolCall) -> ToolResult | None:
    """None: the call may go on (possibly with rewritten arguments on `call`); else the
    refusal the model reads instead of running it."""
    tool_ctx = ctx.tool_context
    if tool_ctx.config is not None and not tool_ctx.config.trust.enforce:
        return None
    spec = ctx.tools.spec(call.name)
    if spec is None or not (spec.controls or spec.outbound):
        return None
    args = _arguments(spec, call)
    if args is None or not spec.is_consequential(args, tool_ctx):
        return None
    approvals = tool_ctx.own(OwnerApprovals)
    # One check at a time per agent (parallel calls): a person is asked one question at
    # a time, and a value approved for one call is the owner's for the next.
    with approvals.lock:
        evidence = EvidenceIndex.of(session_evidence(ctx), approvals.normalised_rows)
        taint = find_taint(call.name, args, spec.controls, evidence, spec.outbound)
        if taint is None:
            return None
        decision = decide_taint(taint, has_human=tool_ctx.approve is not None)
        if decision.outcome == "ask_human" and tool_ctx.approve is not None:
            assert decision.prompt is not None
            decision = resolve_taint(taint, _ask(tool_ctx, decision.prompt))
        if decision.allowed:
            approvals.texts.append(str(args.get(taint.argument)))
    log.info(
        "taint check on %s.%s: %s (%s)", call.name, taint.argument, decision.outcome, taint.source
    )
    if not decision.allowed:
        how = (
            "; to allow it, name the value in your own message or run attended and approve it"
            if decision.source == "unattended"
            else ""
        )
        ctx.callbacks.status(
            f"{call.name} refused: its {taint.argument} came from untrusted content "
            f"({taint.source}){how}"
        )
        return ToolResult(sanitize_error(refusal_text(taint, decision, tool_ctx.surface)), True)
    _attribute(spec, call, args, taint)
    return None


def _ask(tool_ctx: ToolContext, prompt: Any) -> str | None:
    from herald.tools.terminal_approval import ask_human

    timeout = tool_ctx.config.approvals.timeout_seconds if tool_ctx.config else 120.0
    assert tool_ctx.approve is not None
    return ask_human(tool_ctx.approve, prompt, timeout, tool_ctx.cancel)


def _attribute(spec: ToolSpec, call: ToolCall, args: dict[str, Any], taint: Taint) -> None:
    """An approved kept text (a memory entry, a skill) from untrusted content is stored
    with its source, so it never reads later as the owner's own standing instruction."""
    if taint.argument not in spec.attributed or not isinstance(args.get(taint.argument), str):
        return
    note = f" [source: untrusted {taint.source}; approved by the owner]"
    args[taint.argument] = args[taint.argument].rstrip() + note
    call.arguments = json.dumps(args, ensure_ascii=False)


__all__ = ["OwnerApprovals", "owner_accounts", "session_evidence", "taint_gate"]
