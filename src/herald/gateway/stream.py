"""Streaming text to a request/response client (the API's SSE) without leaking secrets.

Deltas are redacted before they are passed on; since a secret can arrive split over
several deltas, text is held back until a whitespace boundary (secrets are single
tokens), or until the held text grows past `MAX_HOLD` characters. `flush` passes on
whatever is left when the turn ends.
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

    def feed(self, delta: str) -> None:
        self._held += delta
        cut = max(self._held.rfind(" "), self._held.rfind("\n"))
        if cut < 0 and len(self._held) < MAX_HOLD:
            return
        if cut < 0:
            cut = len(self._held) - 1
        ready, self._held = self._held[: cut + 1], self._held[cut + 1 :]
        self._emit(ready)

    def flush(self) -> None:
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
