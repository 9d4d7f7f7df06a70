"""Streaming text to a request/response client (the API's SSE) without leaking secrets.

Deltas are redacted before they are passed on; since a secret can arrive split over
several deltas, text is held back until a whitespace boundary (secrets are single
tokens), or until the held text grows past `MAX_HOLD` characters. `flush` passes on
whatever is left when the turn ends.

A model call that fails mid-stream is retried, and the text of the failed attempt
is not the answer. An SSE client cannot be asked to take text back, so nothing of an
attempt leaves before the attempt is known good: deltas are kept per attempt and
passed on (in their original pieces) when the call has ended — the model moved on to
its tool calls (`release`) or the turn ended (`flush`); `discard` drops a failed
attempt's text. The price is latency within one model call; the keep-alive comments
hold the connection meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from herald.safety import redact

log = logging.getLogger(__name__)

MAX_HOLD = 2048


class StreamRedactor:
    def __init__(self, sink: Callable[[str], None] | None):
        self.sink = sink
        self._held = ""
        self._attempt: list[str] = []  # deltas of the model call still running

    def feed(self, delta: str) -> None:
        self._attempt.append(delta)

    def discard(self) -> None:
        """The running model call failed and is retried: its text never leaves."""
        self._attempt.clear()

    def release(self) -> None:
        """The model call ended well: pass its text on."""
        attempt, self._attempt = self._attempt, []
        for delta in attempt:
            self._pass_on(delta)

    def _pass_on(self, delta: str) -> None:
        self._held += delta
        cut = max(self._held.rfind(" "), self._held.rfind("\n"))
        if cut < 0 and len(self._held) < MAX_HOLD:
            return
        if cut < 0:
            cut = len(self._held) - 1
        ready, self._held = self._held[: cut + 1], self._held[cut + 1 :]
        self._emit(ready)

    def flush(self) -> None:
        self.release()
        held, self._held = self._held, ""
        if held:
            self._emit(held)

    def _emit(self, text: str) -> None:
        if self.sink is None:
            return
        try:
            self.sink(redact(text))
        except Exception as exc:  # the client went away; the turn goes on
            log.debug("stream sink failed: %s", exc)


__all__ = ["StreamRedactor"]
