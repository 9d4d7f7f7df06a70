"""Gateway (L6): one long-running process serving many chat entrances."""

from herald.gateway.contracts import (
    Button,
    ChatType,
    DispatchResult,
    EventSink,
    MessageEvent,
    PlatformAdapter,
    SendResult,
    StreamCallbacks,
)

__all__ = [
    "Button",
    "ChatType",
    "DispatchResult",
    "EventSink",
    "MessageEvent",
    "PlatformAdapter",
    "SendResult",
    "StreamCallbacks",
]
