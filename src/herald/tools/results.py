"""Oversized tool results: the full text goes to a file, the model gets a head preview.

Each tool declares `max_result_chars`. A larger result is written in full to
``$HERALD_HOME/cache/tool-results/<timestamp>-<tool>-<id>.txt`` and the model
reads a preview of its first lines plus the path and how to read the rest, so a
huge output neither floods the context nor is lost. Without a home the result
is truncated with a note saying so. Errors are never spilled (they are capped
by `sanitize_error`).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from pathlib import Path

log = logging.getLogger(__name__)

SPILL_DIR = ("cache", "tool-results")
MAX_PREVIEW_CHARS = 4_000
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def spill_dir(home_root: Path) -> Path:
    return home_root.joinpath(*SPILL_DIR)


def _preview(content: str, limit: int) -> str:
    """The head of `content`, cut at a line end when one is reasonably close."""
    head = content[:limit]
    cut = head.rfind("\n")
    if cut >= limit // 2:
        head = head[: cut + 1]
    return head


def _preview_budget(max_result_chars: int) -> int:
    # Leave room for the note so the whole message stays within the tool's limit.
    return max(200, min(MAX_PREVIEW_CHARS, max_result_chars - 600))


def limit_result(
    content: str,
    *,
    tool: str,
    max_result_chars: int,
    home_root: Path | None,
    now: float | None = None,
) -> str:
    """`content` if it fits; otherwise a preview that points at the full text on disk."""
    if len(content) <= max_result_chars:
        return content
    head = _preview(content, _preview_budget(max_result_chars))
    shown_lines = head.count("\n") if head.endswith("\n") else head.count("\n") + 1
    total_lines = content.count("\n") + (0 if content.endswith("\n") else 1)
    path = _write_spill(content, tool, home_root, now) if home_root is not None else None
    if path is None:
        note = (
            f"[output truncated: showing the first {len(head)} of {len(content)} characters; "
            "the rest was not saved. Narrow the request to see more.]"
        )
        return f"{head}\n{note}"
    note = (
        f"[output too large: showing the first {shown_lines} of {total_lines} lines "
        f"({len(head)} of {len(content)} characters). The full output is saved at {path} ; "
        f"read the rest with read_file on that path, starting at line {shown_lines + 1}.]"
    )
    return f"{head}\n{note}"


def _write_spill(content: str, tool: str, home_root: Path, now: float | None) -> Path | None:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))
    safe_tool = _UNSAFE_NAME.sub("_", tool)[:40] or "tool"
    directory = spill_dir(home_root)
    path = directory / f"{stamp}-{safe_tool}-{uuid.uuid4().hex[:8]}.txt"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    except OSError as exc:
        log.warning("could not save a large %s result to %s: %s", tool, path, exc)
        return None
    return path
