"""Approval of MCP tool calls, per server policy (``mcp.servers.<name>.approve``).

- ``never``: calls run unasked;
- ``dangerous``: a human approves calls of tools the server does not mark read-only;
- ``always``: a human approves every call (the default for a server with any tool
  that is not marked read-only).

A human answers through ``ToolContext.approve`` (the same prompt the terminal
tool uses; "session" approves that tool for the rest of the session). With no
human present the unattended policy decides (``approvals.unattended`` for the
surface, else ``approvals.unattended_default``): nothing is approved for a human
who is not there. ``approvals.mode: off`` runs calls unasked, as for commands.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from herald.config import HeraldConfig
from herald.safety import ApprovalPrompt, redact
from herald.tools import ToolArgumentError, ToolContext
from herald.tools.terminal_approval import ask_human


@dataclass
class ApprovedMcpTools:
    """MCP tools the human approved for the rest of this session."""

    names: set[str] = field(default_factory=set)


ARGUMENT_PREVIEW_CHARS = 300
CHOICES = ("once", "session", "deny")


class CallRefused(ToolArgumentError):
    """The call was not approved; the message tells the model why."""


def effective_policy(configured: str | None, tools_read_only: list[bool]) -> str:
    if configured is not None:
        return configured
    return "never" if tools_read_only and all(tools_read_only) else "always"


def needs_approval(policy: str, read_only: bool) -> bool:
    if policy == "never":
        return False
    if policy == "dangerous":
        return not read_only
    return True


def call_preview(server: str, tool: str, arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    if len(text) > ARGUMENT_PREVIEW_CHARS:
        text = text[:ARGUMENT_PREVIEW_CHARS] + "…"
    return redact(f"{server}.{tool}({text})")


def gate_call(
    ctx: ToolContext,
    *,
    server: str,
    tool: str,
    tool_name: str,
    arguments: dict[str, Any],
    policy: str,
    read_only: bool,
) -> None:
    """Return when the call may run; raise `CallRefused` otherwise."""
    if not needs_approval(policy, read_only):
        return
    config = ctx.config or HeraldConfig()
    approvals = config.approvals
    if approvals.mode == "off":
        return
    approved = ctx.own(ApprovedMcpTools).names
    if tool_name in approved:
        return
    what = f"the MCP tool {tool} of server {server}"
    if ctx.approve is None:
        answer = approvals.unattended.get(ctx.surface, approvals.unattended_default)
        if answer == "allow":
            return
        raise CallRefused(
            f"Not run: {what} needs a human's approval (mcp.servers.{server}.approve is "
            f"{policy}) and no one can approve it here ({ctx.surface}). Do not retry it; "
            "find a way that does not need it or tell the user."
        )
    prompt = ApprovalPrompt(
        command=call_preview(server, tool, arguments),
        rule=f"mcp:{server}",
        description=f"{what}" + ("" if read_only else " (it may change things)"),
        choices=CHOICES,
    )
    answer = ask_human(ctx.approve, prompt, approvals.timeout_seconds, ctx.cancel)
    if answer == "session":
        approved.add(tool_name)
        return
    if answer in ("once", "always"):
        return
    if answer is None and ctx.cancel.is_set():
        raise CallRefused("Not run: the turn was interrupted while waiting for approval.")
    if answer is None:
        raise CallRefused(
            f"The user did not approve {what} in time; that counts as a denial and it was not "
            "run. Ask the user or take another approach."
        )
    raise CallRefused(
        f"The user denied {what}; it was not run. Do not retry it; ask the user what to do."
    )
