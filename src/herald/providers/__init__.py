"""Providers (L1): transports per API shape, error classification, backoff,
credential pool, fallback chain and the auxiliary model."""

from herald.providers.auxiliary import AuxiliaryClient
from herald.providers.backoff import backoff_delay, sleep_interruptible
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
from herald.providers.client import ModelClient
from herald.providers.credentials import CredentialPool, KeyStatus
from herald.providers.error_mapping import to_provider_error
from herald.providers.errors import ClassifiedError, FailoverReason, Recovery, classify_error
from herald.providers.message import Message, from_api_messages, to_api_messages
from herald.providers.pricing import Price, estimate_cost, price_for
from herald.providers.probe import ProbeResult, probe_endpoint
from herald.providers.selection import (
    Endpoint,
    ProviderConfigError,
    Selection,
    create_transport,
    detect_provider,
    register_transport,
    resolve_auxiliary,
    resolve_chain,
    resolve_endpoint,
    resolve_selection,
    transport_modes,
)

__all__ = [
    "AuxiliaryClient",
    "CallCancelled",
    "CallSettings",
    "ClassifiedError",
    "CredentialPool",
    "DeltaCallback",
    "Endpoint",
    "FailoverReason",
    "KeyStatus",
    "Message",
    "ModelClient",
    "NormalizedResponse",
    "Price",
    "ProbeResult",
    "ProviderConfigError",
    "ProviderError",
    "ProviderTransport",
    "Recovery",
    "Selection",
    "StreamDelta",
    "ToolCall",
    "Usage",
    "backoff_delay",
    "classify_error",
    "create_transport",
    "detect_provider",
    "estimate_cost",
    "from_api_messages",
    "price_for",
    "probe_endpoint",
    "register_transport",
    "resolve_auxiliary",
    "resolve_chain",
    "resolve_endpoint",
    "resolve_selection",
    "sleep_interruptible",
    "to_api_messages",
    "to_provider_error",
    "transport_modes",
]
