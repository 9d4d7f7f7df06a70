"""Lean transports: the two wire formats (OpenAI chat completions, Anthropic
messages) spoken over one httpx2 client, without importing the SDKs; the default
`model.transport`, with the SDK transports kept behind ``model.transport: sdk``."""

from herald.providers.lean.transports import (
    LeanAnthropicMessagesTransport,
    LeanOpenAIChatTransport,
)

__all__ = ["LeanAnthropicMessagesTransport", "LeanOpenAIChatTransport"]
