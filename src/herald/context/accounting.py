"""Token accounting anchored on what the provider reported (DESIGN invariant 6).

The provider's usage for the last call counts every message it saw plus the
reply it produced; only messages added since are estimated. The anchor is
saved with the session so a resumed session starts from the last report, not
from a fresh estimate of its whole history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from herald.context.tokens import estimate_messages_tokens, estimate_text_tokens

Estimator = Callable[[list[dict[str, Any]]], int]


@dataclass(frozen=True)
class UsageAnchor:
    prompt_tokens: int  # the whole prompt of the last reported call (system, tools, history)
    completion_tokens: int  # the reply that call produced
    message_count: int  # history messages the anchor covers, the reply included

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class TokenAccountant:
    def __init__(self, estimator: Estimator = estimate_messages_tokens):
        self.estimator = estimator
        self.anchor: UsageAnchor | None = None

    def record(self, *, prompt_tokens: int, completion_tokens: int, message_count: int) -> None:
        """A provider report for a call that saw `message_count - 1` history messages and
        produced the reply that will be history message number `message_count`."""
        if prompt_tokens <= 0:
            return  # some servers report nothing; keep the previous anchor
        self.anchor = UsageAnchor(prompt_tokens, completion_tokens, message_count)

    def reset(self) -> None:
        """After compression the history no longer matches the anchor."""
        self.anchor = None

    def current(
        self, system_prompt: str, messages: list[dict[str, Any]], tools_chars: int = 0
    ) -> int:
        """Tokens the next request will carry."""
        anchor = self.anchor
        if anchor is not None and anchor.message_count <= len(messages):
            return anchor.tokens + self.estimator(messages[anchor.message_count :])
        return (
            estimate_text_tokens(system_prompt) + self.estimator(messages) + int(tools_chars / 3.6)
        )

    def to_meta(self) -> dict[str, Any] | None:
        return asdict(self.anchor) if self.anchor else None

    def load_meta(self, data: dict[str, Any] | None) -> None:
        try:
            self.anchor = UsageAnchor(**data) if data else None
        except TypeError:
            self.anchor = None  # an old or damaged record: estimate instead
