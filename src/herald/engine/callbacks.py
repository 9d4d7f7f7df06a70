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
    # The background review changed memory or skills ("saved 1 memory, …"); called from
    # the review thread after the turn has ended.
    on_learning: Callable[[str], None] | None = None
    # A model call is about to be retried after its attempt had already streamed text:
    # that text is not the answer, and a surface showing it live should take it back.
    on_stream_discard: Callable[[], None] | None = None

    def status(self, message: str) -> None:
        if self.on_status is not None:
            self.on_status(message)

    def stream_discard(self) -> None:
        """The failed attempt's deltas (text and reasoning) are void: called before the
        retry's notice and first delta, and also when the failure ends the turn."""
        if self.on_stream_discard is not None:
            self.on_stream_discard()
