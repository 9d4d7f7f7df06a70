"""Phase 2: which messages stay verbatim.

The head is what came before the first compression (the original request);
the tail is sized by a token budget, always contains the last user message,
and never starts inside an assistant-tool-call group, so no call is ever
separated from its result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from herald.providers.message import Message

SUMMARY_MARK = "[Context summary"
# A user message put between the summary and a tail that starts with an assistant
# message (a compression in the middle of a turn), so roles still alternate.
BRIDGE_MARK = "[Continuing after the context summary; the task in progress:]"
MIN_MIDDLE_MESSAGES = 4


def text_of(message: Message) -> str:
    """The message's text as the model is shown it ('' for none or multimodal parts)."""
    content = message.sent_content
    return content if isinstance(content, str) else ""


def stored_text_of(message: Message) -> str:
    """The message's clean text (its API copy may wrap it: an untrusted summary is sent
    fenced, see herald.safety.provenance)."""
    content = message.content
    return content if isinstance(content, str) else ""


def is_summary(message: Message) -> bool:
    return stored_text_of(message).startswith(SUMMARY_MARK)


def is_bridge(message: Message) -> bool:
    return stored_text_of(message).startswith(BRIDGE_MARK)


def bridge_message(role: str, task: str) -> Message:
    """The message that keeps roles alternating after a summary of role `role`'s
    opposite: a user turn restating the task, or an assistant acknowledgement."""
    if role == "user":
        return Message("user", f"{BRIDGE_MARK}\n{task}")
    return Message("assistant", f"{BRIDGE_MARK}\nUnderstood; continuing.")


def strip_bridge(text: str) -> str:
    return text[len(BRIDGE_MARK) :].strip() if text.startswith(BRIDGE_MARK) else text


@dataclass(frozen=True)
class Boundaries:
    head_end: int  # messages[:head_end] are the head
    tail_start: int  # messages[tail_start:] are the tail
    last_user: int  # index of the last user message
    move_last_user: bool  # the current turn alone overflows the budget: carry the user
    # message into the rebuilt history instead of keeping the whole turn


def _head_end(messages: list[Message]) -> int:
    for i, msg in enumerate(messages):
        if is_summary(msg):
            return i  # everything before the first summary is the protected head
    for i, msg in enumerate(messages):
        if msg.role == "user":
            return i + 1  # the first request
    return 0


def _group_start(messages: list[Message], index: int) -> int:
    """Move back from a tool result to the assistant message that called it."""
    while index > 0 and messages[index].role == "tool":
        index -= 1
    return index


def choose_boundaries(
    messages: list[Message],
    *,
    tail_budget_tokens: int,
    estimate: Callable[[Message], int],
) -> Boundaries | None:
    """None when there is nothing between head and tail worth compressing."""
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if not users:
        return None
    last_user = users[-1]
    head_end = _head_end(messages)
    if len(messages) - head_end < MIN_MIDDLE_MESSAGES:
        return None  # hardly anything after the head

    used, budget_start = 0, len(messages)
    for i in range(len(messages) - 1, head_end - 1, -1):
        cost = estimate(messages[i])
        if used + cost > tail_budget_tokens and budget_start < len(messages):
            break
        used += cost
        budget_start = i
    budget_start = min(budget_start, len(messages) - 1)  # the newest message always stays

    move_last_user = False
    if budget_start <= last_user:
        # Start at a user message so the rebuilt history alternates cleanly.
        tail_start = next(i for i in users if i >= budget_start)
    else:
        # The current turn is bigger than the budget: keep its newest groups and
        # carry the user message across.
        tail_start = _group_start(messages, budget_start)
        if tail_start <= last_user:
            tail_start = last_user
        else:
            move_last_user = last_user >= head_end  # in the head it is kept anyway
    if tail_start - head_end < MIN_MIDDLE_MESSAGES and not move_last_user:
        return None  # too little between head and tail to be worth a summary
    return Boundaries(head_end, tail_start, last_user, move_last_user)
