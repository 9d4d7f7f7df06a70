"""Hooks a surface passes in to watch a turn as it happens (streaming, tool activity)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class TurnCallbacks:
    on_text_delta: Callable[[str], None] | None = None
    on_reasoning_delta: Callable[[str], None] | None = None
    on_tool_start: Callable[[str, str], None] | None = None  # tool name, raw arguments
    on_tool_end: Callable[[str, str, bool], None] | None = None  # name, result, is_error
    on_status: Callable[[str], None] | None = None  # retries, fallbacks, notices
    # The model call that was streaming failed: forget every text/reasoning delta
    # since the call began (it is not part of the answer). Called before the retry,
    # its notice and its first delta — and also when no retry follows.
    on_stream_discard: Callable[[], None] | None = None
    # The background review changed memory or skills ("saved 1 memory, …"); called from
    # the review thread after the turn has ended.
    on_learning: Callable[[str], None] | None = None

    def status(self, message: str) -> None:
        if self.on_status is not None:
            self.on_status(message)

    def stream_discard(self) -> None:
        if self.on_stream_discard is not None:
            self.on_stream_discard()
