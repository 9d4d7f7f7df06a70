"""A running turn, as its caller sees it: `TurnHandle`, and the `Humans` it may ask.

`Agent.start_turn()` returns a handle. The handle owns that turn's controls:
``interrupt()`` stops this turn and never a later one, ``steer(text)`` reaches
this turn's next tool result, and ``result()`` waits for the `TurnResult`.
`Humans` carries the approval and clarify callables of the person watching this
turn; a turn started without one is unattended, and approvals follow the
unattended policy (nobody approves for a human who is not there).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.engine.result import TurnResult
    from herald.safety import ApprovalPrompt


@dataclass(frozen=True)
class Humans:
    """Who can answer for this turn. ``approve`` returns "once" | "session" | "always" |
    "deny", or None on timeout; ``clarify`` returns the answer, or None."""

    approve: Callable[[ApprovalPrompt], str | None] | None = None
    clarify: Callable[[str, list[str] | None], str | None] | None = None


class TurnHandle:
    """One turn running on its own thread."""

    def __init__(self, *, cancel: threading.Event, steer: Callable[[str], None]):
        self._cancel = cancel
        self._steer = steer
        self._finished = threading.Event()
        self._result: TurnResult | None = None
        self._error: BaseException | None = None

    # ---- controls, callable from any thread ---------------------------------------------

    def interrupt(self) -> None:
        """Stop this turn at the next safe point; a no-op once it has ended."""
        if not self._finished.is_set():
            self._cancel.set()

    def steer(self, text: str) -> None:
        """Add text the model sees on its next tool result in this turn."""
        if not self._finished.is_set():
            self._steer(text)

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    def result(self, timeout: float | None = None) -> TurnResult:
        """The turn's result; raises TimeoutError if it has not ended within ``timeout``,
        and re-raises what the turn raised (a bug: turns end with a named exit reason)."""
        if not self._finished.wait(timeout):
            raise TimeoutError("the turn is still running")
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    # ---- set by the thread that runs the turn ---------------------------------------------

    def _finish(self, result: TurnResult | None, error: BaseException | None = None) -> None:
        self._result, self._error = result, error
        self._finished.set()


__all__ = ["Humans", "TurnHandle"]
