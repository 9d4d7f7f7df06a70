"""Oversized tool results: cut the new result, not the history.

A tool result that is larger than the room a compression makes (between where it lands
and the threshold) would make every later pressure check
compress history that cannot shrink: the result sits in the protected tail. So a round's results are capped at
record time: a result over its share is cut to a head and a tail excerpt around a note
that says where the full text was saved (readable with `read_file`). The cut text is what
is stored, so a resumed session sends exactly the same bytes and the cached prefix holds.
The same rule applies to every tool.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from herald.config.shared_file import atomic_write
from herald.engine.pressure import CHARS_PER_TOKEN, set_overhead

if TYPE_CHECKING:
    from herald.engine.turn_context import TurnContext

log = logging.getLogger(__name__)

_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def tool_result_cap(ctx: TurnContext, results: int) -> int | None:
    """Characters each of this round's `results` may keep (None: no cap)."""
    if not set_overhead(ctx):
        return None
    tokens = ctx.context_engine.tool_result_cap(results)
    return None if tokens is None else int(tokens * CHARS_PER_TOKEN)


def cut_tool_result(ctx: TurnContext, call_id: str, content: str, cap: int) -> str:
    """`content` if it fits in `cap` characters, else a head and tail excerpt with a note
    naming the file that holds the whole result."""
    if len(content) <= cap:
        return content
    where = _spill(ctx, call_id, content)
    note_room = 400
    keep = max(200, cap - note_room)
    head = _at_line_end(content[: keep * 2 // 3])
    tail = _at_line_start(content[len(content) - keep // 3 :])
    cut = len(content) - len(head) - len(tail)
    if where.startswith("/") or where.startswith("~"):
        saved = (
            f"the full result ({len(content):,} characters) is saved at {where}; "
            "read it with read_file (offset/limit) for the part that is missing"
        )
    else:
        saved = f"the full result ({len(content):,} characters) could not be saved: {where}"
    note = f"\n\n[… {cut:,} characters cut here to fit the context window; {saved} …]\n\n"
    return head + note + tail


def _at_line_end(text: str) -> str:
    newline = text.rfind("\n")
    return text[: newline + 1] if newline > len(text) // 2 else text


def _at_line_start(text: str) -> str:
    newline = text.find("\n")
    return text[newline + 1 :] if 0 <= newline < len(text) // 2 else text


def _spill(ctx: TurnContext, call_id: str, content: str) -> str:
    """Save the whole result where the session's tools can read it; returns the path,
    or why it could not be saved."""
    name = f"{_SAFE_NAME.sub('_', call_id)[:80] or 'result'}.txt"
    session = _SAFE_NAME.sub("_", ctx.session.id)
    data = content.encode("utf-8", "surrogatepass")
    environment = ctx.tool_context.environment
    try:
        if environment is not None and environment.name != "local":
            # The model's file tools read on the other host (ssh, docker, a sandbox).
            path = environment.resolve(f"~/.cache/herald/spill/{session}/{name}")
            environment.write_bytes(path, data)  # creates the folders
            return path
        home = ctx.tool_context.home
        if home is None:
            return "this session has no Herald home"
        path = home.cache_dir / "spill" / session / name
        atomic_write(path, data.decode("utf-8", "replace"))  # owner-only, never half written
        return str(path)
    except Exception as exc:  # a full disk or an unreachable host: say so, cut anyway
        log.warning("could not save an oversized tool result: %s", exc)
        return f"{type(exc).__name__}: {exc}"
