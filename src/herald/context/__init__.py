"""Context (L3): the frozen system prompt, token accounting, compression and cache plan."""

from herald.context.system_prompt import (
    DEFAULT_IDENTITY,
    PromptInputs,
    build_system_prompt,
    identity_of,
    rewrite_identity,
)
from herald.context.tokens import (
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_text_tokens,
)

__all__ = [
    "DEFAULT_IDENTITY",
    "PromptInputs",
    "build_system_prompt",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_text_tokens",
    "identity_of",
    "rewrite_identity",
]
