"""How a command's output reaches the model: redacted, long output cut to
40 % head and 60 % tail with the full text spilled to a file, and a status
line (exit code, duration, truncation) that survives any truncation."""

from __future__ import annotations

import os
import secrets as _random
import time
from collections.abc import Iterable
from pathlib import Path

from herald.config import HeraldHome
from herald.environments import ExecResult
from herald.safety import redact

HEAD_SHARE = 0.4
_SNAP_SHARE = 0.1  # cut at a line break when one is this close to the cut point
SPILL_DIR_NAME = "tool-results"


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs} s"


def spill_text(text: str, home: HeraldHome | None, *, prefix: str = "terminal") -> Path | None:
    """Save `text` to ``$HERALD_HOME/cache/tool-results/<id>.txt`` (owner-only,
    it is command output); None when there is no home or the write fails."""
    if home is None:
        return None
    directory = home.cache_dir / SPILL_DIR_NAME
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # Same naming as the registry's generic spill (herald.tools.results).
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{prefix}-{_random.token_hex(4)}.txt"
        path = directory / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
            fh.write(text)
        return path
    except OSError:
        return None


def head_tail(text: str, max_chars: int, note: str) -> str:
    """`text` cut to about `max_chars`: the first 40 % and the last 60 %, with
    `note` between them, each cut moved to a nearby line break when there is one."""
    budget = max(0, max_chars - len(note))
    head_len = int(budget * HEAD_SHARE)
    tail_len = budget - head_len
    head = text[:head_len]
    newline = head.rfind("\n")
    if newline >= head_len * (1 - _SNAP_SHARE):
        head = head[: newline + 1]
    tail = text[len(text) - tail_len :] if tail_len else ""
    newline = tail.find("\n")
    if 0 <= newline <= tail_len * _SNAP_SHARE:
        tail = tail[newline + 1 :]
    return head + note + tail


def status_line(result: ExecResult, *, timeout: float, truncation: str = "") -> str:
    if result.interrupted:
        parts = ["interrupted by the user", f"after {format_duration(result.duration_s)}"]
    elif result.timed_out:
        parts = [f"killed after timeout {timeout:g} s"]
    else:
        parts = [f"exit {result.exit_code}", format_duration(result.duration_s)]
    if truncation:
        parts.append(truncation)
    return "[" + " · ".join(parts) + "]"


def render_exec_result(
    result: ExecResult,
    *,
    timeout: float,
    max_chars: int,
    home: HeraldHome | None,
    secrets: Iterable[str] = (),
) -> str:
    """The terminal tool's result text: output, then the status line."""
    output = redact(result.output, extra_secrets=secrets).rstrip("\n")
    truncation = ""
    if len(output) > max_chars:
        path = spill_text(output, home)
        where = f"full text: {path}" if path else "full text could not be saved"
        truncation = f"output truncated: {len(output):,} chars, {where}"
        omitted = f"\n\n[… output truncated; {where} …]\n\n"
        output = head_tail(output, max_chars, omitted)
    body = output if output.strip() else "(no output)"
    return f"{body}\n{status_line(result, timeout=timeout, truncation=truncation)}"
