"""Questions a running turn asks the human at the terminal: command approvals and the
`clarify` tool. The turn runs in a worker thread; the answer comes either from the REPL's
prompt (the next line typed is the answer) or, for `herald chat -q`, from stdin."""

from __future__ import annotations

import select
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.safety import ApprovalPrompt
    from herald.tools import ToolContext

CLARIFY_TIMEOUT_SECONDS = 600.0
_SHORT = {"o": "once", "y": "once", "yes": "once", "s": "session", "a": "always", "d": "deny",
          "n": "deny", "no": "deny"}


def parse_approval(answer: str, choices: tuple[str, ...]) -> str | None:
    """The choice an answer names (a word or its first letter), or None if unclear."""
    word = answer.strip().lower()
    word = _SHORT.get(word, word)
    return word if word in choices else None


def parse_clarify(answer: str, choices: list[str] | None) -> str:
    text = answer.strip()
    if choices and text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    return text


@dataclass
class _Question:
    text: str
    validate: Callable[[str], str | None]  # the accepted answer, or None to ask again
    answer: str | None = None
    done: threading.Event = field(default_factory=threading.Event)


class HumanChannel:
    """One question at a time; `ask` blocks the asking (worker) thread."""

    def __init__(self, show: Callable[[str], None], *, read_stdin: bool = False):
        self.show = show
        self.read_stdin = read_stdin
        self._pending: _Question | None = None
        self._lock = threading.Lock()
        self.cancel: threading.Event | None = None

    @property
    def pending(self) -> bool:
        return self._pending is not None

    def ask(self, text: str, validate: Callable[[str], str | None], timeout: float) -> str | None:
        question = _Question(text, validate)
        with self._lock:
            self._pending = question
        try:
            self.show(text)
            if self.read_stdin:
                return self._ask_stdin(question, timeout)
            remaining = timeout
            while remaining > 0 and not question.done.wait(min(remaining, 0.2)):
                remaining -= 0.2
                if self.cancel is not None and self.cancel.is_set():
                    return None  # the turn was interrupted while waiting
            return question.answer
        finally:
            with self._lock:
                self._pending = None

    def answer(self, line: str) -> bool:
        """Feed a typed line; True when it answered the pending question."""
        with self._lock:
            question = self._pending
        if question is None:
            return False
        accepted = question.validate(line)
        if accepted is None:
            self.show("please answer with one of the choices shown")
            return True
        question.answer = accepted
        question.done.set()
        return True

    def _ask_stdin(self, question: _Question, timeout: float) -> str | None:
        remaining = timeout
        while remaining > 0:
            step = min(remaining, 0.2)
            ready, _, _ = select.select([sys.stdin], [], [], step)
            remaining -= step
            if self.cancel is not None and self.cancel.is_set():
                return None
            if not ready:
                continue
            line = sys.stdin.readline()
            if not line:
                return None  # stdin closed
            accepted = question.validate(line)
            if accepted is not None:
                return accepted
            self.show("please answer with one of the choices shown")
        return None


def install(ctx: ToolContext, channel: HumanChannel, *, approval_timeout: float) -> None:
    """Give the agent's tools a human to ask."""
    channel.cancel = ctx.cancel

    def approve(prompt: ApprovalPrompt) -> str | None:
        hint = " / ".join(f"[{c[0]}]{c[1:]}" for c in prompt.choices)
        return channel.ask(
            f"⚠ {prompt.text()}\n  answer {hint}",
            lambda line: parse_approval(line, prompt.choices),
            approval_timeout,
        )

    def clarify(question: str, choices: list[str] | None) -> str | None:
        lines = [f"? {question}"]
        lines += [f"  {i}. {c}" for i, c in enumerate(choices or [], 1)]
        return channel.ask(
            "\n".join(lines),
            lambda line: parse_clarify(line, choices) or None,
            CLARIFY_TIMEOUT_SECONDS,
        )

    ctx.approve = approve
    ctx.clarify = clarify
