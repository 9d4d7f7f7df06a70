"""A running turn, as its caller sees it: `TurnHandle`, and the `Humans` it may ask.

`Agent.start_turn()` returns a handle. The handle owns that turn's controls (a
cancel event and a steer queue made for it alone): ``interrupt()`` stops this
turn and never a later one, ``steer(text)`` reaches this turn's next tool result
(False once the turn has ended: send it as a new message then), and
``result()`` waits for the `TurnResult`.
`Humans` carries the approval and clarify callables of the person watching this
turn; a turn started without one is unattended, and approvals follow the
unattended policy (nobody approves for a human who is not there).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from herald.engine.steer import SteerQueue

if TYPE_CHECKING:
    from herald.engine.result import TurnResult
    from herald.safety import ApprovalPrompt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Humans:
    """Who can answer for this turn. ``approve`` returns "once" | "session" | "always" |
    "deny", or None on timeout; ``clarify`` returns the answer, or None."""

    approve: Callable[[ApprovalPrompt], str | None] | None = None
    clarify: Callable[[str, list[str] | None], str | None] | None = None


@dataclass
class TurnControls:
    """The cancel flag and steer queue of one turn; its handle owns them."""

    cancel: threading.Event = field(default_factory=threading.Event)
    steer: SteerQueue = field(default_factory=SteerQueue)


class TurnHandle:
    """One turn, running on its own thread (or an executor's)."""

    def __init__(self, controls: TurnControls | None = None):
        self.controls = controls or TurnControls()
        self._cancel = self.controls.cancel
        self._finished = threading.Event()
        self._result: TurnResult | None = None
        self._error: BaseException | None = None
        self._done_callbacks: list[Callable[[TurnHandle], None]] = []
        self._lock = threading.Lock()

    # ---- controls, callable from any thread ---------------------------------------------

    def interrupt(self) -> None:
        """Stop this turn at the next safe point; a no-op once it has ended. Its event
        belongs to this turn alone, so a late call can never stop a later turn."""
        if not self._finished.is_set():
            self._cancel.set()

    def steer(self, text: str) -> bool:
        """Add text the model sees on its next tool result in this turn; False when the
        turn has already ended (the text was not taken)."""
        return self.controls.steer.push(text)

    def add_done_callback(self, fn: Callable[[TurnHandle], None]) -> None:
        """Call ``fn(handle)`` once the turn has ended (at once if it already has), from
        the thread that ran the turn."""
        with self._lock:
            if not self._finished.is_set():
                self._done_callbacks.append(fn)
                return
        fn(self)

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
        with self._lock:
            self._result, self._error = result, error
            self._finished.set()
            callbacks, self._done_callbacks = self._done_callbacks, []
        for fn in callbacks:
            try:
                fn(self)
            except Exception:  # a surface's callback must not hide the result
                log.exception("a turn-done callback failed")


__all__ = ["Humans", "TurnControls", "TurnHandle"]
