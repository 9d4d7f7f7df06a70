"""Provenance in a turn: what each message is labelled, how untrusted content is shown
to the model, and the taint check before a consequential tool call (DESIGN invariant 18).

- The turn's user message is ``owner`` for the owner, ``untrusted:chat:<identity>`` for
  anyone else, ``untrusted:email:<sender address>`` for a mail from anyone but the owner,
  ``untrusted:webhook:<route>`` for a webhook delivery (`user_provenance`).
- A tool result is untrusted when its tool says so (web pages, MCP servers not marked
  trusted, plugin tools declared untrusted, files under ``trust.untrusted_paths``).
- Untrusted content is stored clean and sent fenced (`api_copy`, herald.safety.provenance):
  the fence is the message's API copy, so a resumed session sends the same bytes.
- A compression's new rows are untrusted, with every source, when any row they replace
  was (`label_replacement`).
- `taint_gate` runs in the tool round before a consequential call: the arguments the
  tool declares as controls are checked against this session's evidence (all its rows,
  archived ones too, and the system prompt) by herald.safety.taint. Attended, the owner
  is asked through the same approval prompt and callback as a dangerous command (an
  approval makes the value the owner's for the rest of the session); unattended, the
  call is refused with the reason. ``trust.enforce: false`` turns the check off.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from herald.providers.message import Message
from herald.safety.provenance import (
    OWNER,
    TRUSTED,
    fence,
    is_fenced,
    is_untrusted,
    merge_untrusted,
    source_of,
    untrusted,
)
from herald.tools import ToolResult

if TYPE_CHECKING:
    from herald.engine.options import AgentOptions

log = logging.getLogger(__name__)


def user_provenance(options: AgentOptions) -> str:
    """Who the turn's words are from. A reviewer's or sub-agent's task is Herald's own
    text (written from its parent's conversation, whose evidence the taint check reads
    first), so it is trusted: it clears nothing the parent's untrusted content said."""
    if options.source == "review" or options.delegated:
        return TRUSTED
    if options.source == "webhook":
        route = (options.origin or "webhook").split(":", 1)[-1] or "webhook"
        return untrusted(f"webhook:{route}")
    if options.identity != "owner":
        sender = _mail_sender(options)
        if sender:  # a mail names its sender, whoever the identity (often a guest)
            return untrusted(f"email:{sender}")
        return untrusted(f"chat:{options.identity}")
    return OWNER


def _mail_sender(options: AgentOptions) -> str | None:
    """The sender of an email session: its origin is ``email:<sender address>:<thread>``
    (the email adapter's chat is the sender)."""
    if options.source != "email" or not options.origin:
        return None
    parts = options.origin.split(":", 2)
    return parts[1] if len(parts) > 1 and "@" in parts[1] else None


def api_copy(content: Any, provenance: str | None) -> str | None:
    """The fenced copy of untrusted text content (None when it is sent as it is)."""
    source = source_of(provenance)
    if source is None or not isinstance(content, str):
        return None
    return fence(content, source)


def fenced_api_content(row: Mapping[str, Any], api_content: str | None) -> str | None:
    """The API copy a row is stored with: an untrusted row's is always fenced (a caller
    that attached notes fenced the content first; anything else is fenced whole, so no
    path sends untrusted text bare)."""
    provenance = row.get("provenance")
    source = source_of(provenance)
    if source is None:
        return api_content
    if api_content is None:
        return api_copy(row.get("content"), provenance)
    if is_fenced(api_content):
        return api_content
    log.warning("an untrusted %s message came with an unfenced API copy", row.get("role"))
    return fence(api_content, source)


def label_replacement(replaced: Sequence[Message], inserted: list[dict[str, Any]]) -> None:
    """A compression summarised `replaced`: each row it wrote (a store dict with no
    provenance yet: a summary, a bridge; a moved original keeps its own) is untrusted with
    all their untrusted sources when any of them was, and is sent fenced."""
    label = merge_untrusted(m.provenance for m in replaced)
    if label is None:
        return
    for row in inserted:
        if row.get("provenance") is not None:
            continue
        row["provenance"] = label
        fenced = api_copy(row.get("content"), label)
        if fenced is not None:
            row["api_content"] = fenced


def result_provenance(result: ToolResult | None) -> str | None:
    if result is None or not is_untrusted(result.provenance):
        return None
    return result.provenance


__all__ = [
    "api_copy",
    "fenced_api_content",
    "label_replacement",
    "result_provenance",
    "user_provenance",
]
