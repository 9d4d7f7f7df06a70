"""Providers (L1): transports per API shape, error classification, backoff,
credential pool, fallback chain and the auxiliary model."""

from herald.providers.base import (
    CallCancelled,
    CallSettings,
    DeltaCallback,
    NormalizedResponse,
    ProviderError,
    ProviderTransport,
    StreamDelta,
    ToolCall,
    Usage,
)

__all__ = [
    "CallCancelled",
    "CallSettings",
    "DeltaCallback",
    "NormalizedResponse",
    "ProviderError",
    "ProviderTransport",
    "StreamDelta",
    "ToolCall",
    "Usage",
]
