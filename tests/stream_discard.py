"""Tests of surfaces that consume `TurnCallbacks.on_stream_discard` (issue 13)."""

from __future__ import annotations

from pathlib import Path

import pytest


def _engine_calls_stream_discard() -> bool:
    """Whether the turn engine calls `TurnCallbacks.on_stream_discard` before a retry
    (the faults helper's half of issue 13; the surfaces consume it)."""
    import herald.engine as engine

    package = Path(engine.__file__).parent
    return any(
        "on_stream_discard" in path.read_text(encoding="utf-8")
        for path in package.glob("*.py")
        if path.name != "callbacks.py"
    )


needs_engine_stream_discard = pytest.mark.xfail(
    not _engine_calls_stream_discard(),
    reason="the engine does not call on_stream_discard yet (faults helper, issue 13)",
    strict=True,
)
