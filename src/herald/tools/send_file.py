"""The `send_file` tool (toolset "chat"): put a file from the workdir in the chat the
conversation is in.

Only the gateway composes it in (herald.toolbox `GATEWAY_CAPABILITIES`); the terminal
has no chat to send to. The destination is never an argument: it is the chat (and
thread) of the session, fixed when the gateway built the session's agent
(`ToolContext.chat_files`), so a hijacked model can choose *what* to send, never *where*.

Trust, in the order the checks run:

- the taint rule (engine, before this handler): `path` is the control argument, so a path
  that only untrusted content named (a web page, a fetched file, an email) is refused
  unattended and asked about attended (DESIGN invariant 18);
- the read gate: Herald's secrets are refused like `cat ~/.herald/.env`, and so is every
  other file of Herald's home (config, state.db with every identity's history, memories,
  pairing, plugins): whatever is approved, nothing of the control plane leaves by chat;
- a chat other people see (a group, a channel): the owner approves each file, and with
  nobody there to approve the call is refused (DESIGN invariant 13);
- size: the platform's limit (config ``gateway.send_file``), with the numbers in the error.

The file is read once, through the session's environment, after the checks: the bytes
judged are the bytes uploaded, whatever happens to the path afterwards.
"""

from __future__ import annotations

import mimetypes
import posixpath

from herald.safety import classify_path
from herald.safety.approval import ApprovalPrompt
from herald.tools.declare import tool
from herald.tools.file_common import (
    directory_error,
    display_path,
    read_bytes_or_say_why,
    require_environment,
    resolve_path,
    stat_existing,
)
from herald.tools.read_gate import gate_read, real_paths
from herald.tools.registry import ToolArgumentError, ToolContext, ToolSpec
from herald.tools.terminal_approval import CommandRefused, ask_human, check_env

TOOLSET = "chat"
GROUP_RULE = "chat.group_file"
CONTROL_RULE = "control.send_file"


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _size(size: int) -> str:
    """A size as people read it in a prompt (a small file is not "0.0 MB")."""
    if size < 1_000:
        return f"{size} bytes"
    if size < 1_000_000:
        return f"{size / 1_000:.1f} kB"
    return _megabytes(size)


def _refuse_control_plane(path: str, ctx: ToolContext) -> None:
    env = require_environment(ctx)
    names = check_env(ctx, env, env.cwd)
    for candidate in real_paths(path, env):
        found = classify_path(candidate, names)
        if found is not None:
            raise CommandRefused(
                f"Refused: {found.path} is {found.what}; Herald's own files are never sent "
                f"to a chat, whoever approves [{CONTROL_RULE}]. Send a copy of what the user "
                "needs (an excerpt in a new file under the workdir) instead."
            )


def _owner_approves(ctx: ToolContext, shown: str, size: int, platform: str) -> None:
    """A chat other people see: the owner approves this file, or it is not sent."""
    if ctx.approve is None:
        raise CommandRefused(
            f"Refused: sending {shown} to a {platform} group chat needs the owner's approval, "
            f"and nobody is here to give it [{GROUP_RULE}]. Ask the owner to send it from a "
            "conversation they are in, or send it in a direct message."
        )
    prompt = ApprovalPrompt(
        command=f"send_file {shown} ({_size(size)})",
        rule=GROUP_RULE,
        description=f"upload a file to this {platform} group chat: everyone in it will see it",
        choices=("once", "deny"),
    )
    timeout = ctx.config.approvals.timeout_seconds if ctx.config is not None else 120.0
    answer = ask_human(ctx.approve, prompt, timeout, ctx.cancel)
    if answer not in ("once", "session", "always"):
        raise CommandRefused(
            f"Refused: the owner did not approve sending {shown} to this group chat "
            f"[{GROUP_RULE}]; do not send it another way."
        )


@tool(toolset=TOOLSET, reads=("path",), consequential=True, controls=("path",))
def send_file(ctx: ToolContext, path: str, caption: str = "") -> str:
    """Send a file from the working directory to the user, in this chat (and thread). Use
    it when the user asks for a file or when a file is the answer (a report, a chart, an
    export); the chat is always this conversation's own.

    Args:
        path: the file to send (relative to the working directory, or absolute)
        caption: a short line shown with the file
    """
    chat = ctx.chat_files
    if chat is None:
        raise ToolArgumentError(
            "send_file works only in a chat conversation (Telegram, Discord, Slack, email, "
            "Signal, Matrix); here, tell the user the file's path instead"
        )
    unsupported = chat.unsupported()
    if unsupported is not None:
        raise ToolArgumentError(unsupported)
    env = require_environment(ctx)
    target = resolve_path(env, path)
    gate_read(target, ctx, env)  # Herald's secrets: the message read_file gives
    _refuse_control_plane(target, ctx)
    shown = display_path(env, target)
    info = stat_existing(env, target, shown)
    if info.is_dir:
        raise directory_error(env, target, shown)
    if info.size > chat.max_bytes:
        raise ToolArgumentError(
            f"{shown} is {_megabytes(info.size)}; files sent to {chat.platform} may be at "
            f"most {_megabytes(chat.max_bytes)} (config gateway.send_file). Send a smaller "
            "file (compress it, or split it) or tell the user where it is."
        )
    if info.size == 0:
        raise ToolArgumentError(f"{shown} is empty; there is nothing to send")
    if chat.shared:
        _owner_approves(ctx, shown, info.size, chat.platform)
    data = read_bytes_or_say_why(env, target, shown, chat.max_bytes + 1)
    if len(data) > chat.max_bytes:  # it grew since the check
        raise ToolArgumentError(
            f"{shown} grew past {_megabytes(chat.max_bytes)} while being read; not sent"
        )
    try:
        return chat.send(posixpath.basename(target), data, caption.strip())
    except RuntimeError as exc:
        raise ToolArgumentError(f"{shown} was not sent: {exc}") from None


def guess_mime(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


TOOLS: tuple[ToolSpec, ...] = (send_file,)

__all__ = ["GROUP_RULE", "TOOLS", "TOOLSET", "guess_mime", "send_file"]
