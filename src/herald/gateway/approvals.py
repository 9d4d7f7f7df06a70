"""Questions a running turn asks the chat: command approvals and the `clarify` tool.

The turn runs in a worker thread; `ChatPrompts.approve` (installed as the tool
context's ``approve``) posts the request to the chat — with buttons where the
platform has them, else with the `/approve` commands spelled out — and blocks that
thread until `/approve [session|always]` or `/deny` arrives as an ordinary message,
the turn is interrupted, or the timeout passes (no answer is a denial). The command
shown is redacted. `clarify` works the same way; the next plain message answers it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from herald.gateway.contracts import Button
from herald.safety import redact

if TYPE_CHECKING:
    from herald.safety import ApprovalPrompt

Post = Callable[[str, "list[list[Button]] | None"], None]

CHOICE_BUTTONS: dict[str, Button] = {
    "once": Button("✅ Allow once", "/approve"),
    "session": Button("Allow for this session", "/approve session"),
    "always": Button("Always allow", "/approve always"),
    "deny": Button("❌ Deny", "/deny"),
}
CHOICE_COMMANDS = {
    "once": "/approve",
    "session": "/approve session",
    "always": "/approve always",
    "deny": "/deny",
}
_POLL = 0.05


@dataclass
class _Pending:
    kind: str  # approval | clarify
    choices: tuple[str, ...]
    answer: str | None = None
    done: threading.Event = field(default_factory=threading.Event)


def approval_text(prompt: ApprovalPrompt, *, buttons: bool, timeout: float) -> str:
    # The same order as every surface: verdict first, the command fenced after it.
    lines = ["⚠️ Approval needed", *prompt.verdict_lines(), *prompt.command_block()]
    if not buttons:
        lines.append("Reply " + ", ".join(CHOICE_COMMANDS[c] for c in prompt.choices) + ".")
    lines.append(f"No answer within {timeout:.0f} s counts as a denial.")
    return redact("\n".join(lines))


def approval_buttons(choices: tuple[str, ...]) -> list[list[Button]]:
    row = [CHOICE_BUTTONS[c] for c in choices if c in CHOICE_BUTTONS and c != "deny"]
    rows = [row[i : i + 2] for i in range(0, len(row), 2)]
    if "deny" in choices:
        rows.append([CHOICE_BUTTONS["deny"]])
    return rows


def reaction_choices(buttons: list[list[Button]]) -> tuple[dict[str, str], str]:
    """For platforms whose buttons are reactions on the prompt (Signal, Matrix): the
    emoji each button's command answers to, and the line that tells people so."""
    choices: dict[str, str] = {}
    labels = []
    for row in buttons:
        for button in row:
            emoji = REACTION_FOR.get(button.data)
            if emoji:
                choices[emoji] = button.data
                labels.append(f"{emoji} {button.label}")
    return choices, "React to this message: " + " · ".join(labels)


REACTION_FOR = {"/approve": "👍", "/approve session": "🔁", "/approve always": "⭐", "/deny": "👎"}


def clarify_text(question: str, choices: list[str] | None) -> str:
    lines = [f"❓ {question}"]
    lines += [f"  {i}. {choice}" for i, choice in enumerate(choices or [], 1)]
    lines.append("Reply with your answer" + (" or a number." if choices else "."))
    return redact("\n".join(lines))


class ChatPrompts:
    """One pending question per session at a time; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: _Pending | None = None

    @property
    def pending_kind(self) -> str | None:
        with self._lock:
            return self._pending.kind if self._pending else None

    def _ask(
        self,
        pending: _Pending,
        post: Callable[[], None],
        timeout: float,
        cancel: threading.Event,
    ) -> str | None:
        with self._lock:
            self._pending = pending
        try:
            post()
            deadline = time.monotonic() + timeout
            while not pending.done.wait(_POLL):
                if cancel.is_set() or time.monotonic() >= deadline:
                    return None
            return pending.answer
        finally:
            with self._lock:
                if self._pending is pending:
                    self._pending = None

    # ---- asked from the turn thread -------------------------------------------------------

    def approve(
        self,
        prompt: ApprovalPrompt,
        *,
        post: Post,
        buttons: bool,
        timeout: float,
        cancel: threading.Event,
        on_timeout: Callable[[], None] | None = None,
    ) -> str | None:
        text = approval_text(prompt, buttons=buttons, timeout=timeout)
        keyboard = approval_buttons(prompt.choices) if buttons else None
        answer = self._ask(
            _Pending("approval", tuple(prompt.choices)),
            lambda: post(text, keyboard),
            timeout,
            cancel,
        )
        if answer is None and not cancel.is_set() and on_timeout is not None:
            on_timeout()
        return answer

    def clarify(
        self,
        question: str,
        choices: list[str] | None,
        *,
        post: Post,
        timeout: float,
        cancel: threading.Event,
    ) -> str | None:
        text = clarify_text(question, choices)
        return self._ask(
            _Pending("clarify", tuple(choices or ())), lambda: post(text, None), timeout, cancel
        )

    # ---- answered from the event loop -----------------------------------------------------

    def answer_approval(self, choice: str) -> str:
        """The chat's reply to `/approve …` or `/deny`."""
        with self._lock:
            pending = self._pending
            if pending is None or pending.kind != "approval":
                return "Nothing is waiting for approval."
            if choice not in pending.choices:
                offered = ", ".join(CHOICE_COMMANDS[c] for c in pending.choices)
                return f"That choice is not offered for this command; reply {offered}."
            pending.answer = choice
            pending.done.set()
        return "Denied." if choice == "deny" else f"Approved ({choice})."

    def answer_clarify(self, text: str) -> bool:
        with self._lock:
            pending = self._pending
            if pending is None or pending.kind != "clarify":
                return False
            answer = text.strip()
            if pending.choices and answer.isdigit() and 1 <= int(answer) <= len(pending.choices):
                answer = pending.choices[int(answer) - 1]
            pending.answer = answer
            pending.done.set()
        return True


__all__ = [
    "CHOICE_BUTTONS",
    "CHOICE_COMMANDS",
    "REACTION_FOR",
    "ChatPrompts",
    "approval_buttons",
    "approval_text",
    "reaction_choices",
]
