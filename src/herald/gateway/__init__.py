"""Gateway (L6): one long-running process serving many chat entrances.

Adapters turn platform updates into `MessageEvent`s and hand them to the runner
(`GatewayRunner`, an `EventSink`), which authorizes, routes to a profile and session,
handles slash commands and busy sessions, runs the turn in a thread pool and
delivers the reply (split with `split_message`, recorded in the delivery ledger).
`resolve_secret_ref` resolves ``${VAR}`` references in platform settings. Photos and voice
notes travel on the event as `InboundFile`s: an adapter saves one with `receive_file` (or
hands over a fetch for the runner to call once the sender is authorized), and the runner
turns them into image inputs and transcripts (`herald.gateway.media`).
`herald gateway run|status|stop` lives in `herald.gateway.lifecycle`.

The runner and the loopback test platform are imported on first use, so adapters
importing this package for the contracts stay light.
"""

from typing import TYPE_CHECKING, Any

from herald.gateway.contracts import (
    Button,
    ChatType,
    DispatchResult,
    EventSink,
    InboundFile,
    MessageEvent,
    PlatformAdapter,
    SendResult,
    StreamCallbacks,
)
from herald.gateway.routing import UnservedProfileError, resolve_profile
from herald.gateway.secret_refs import resolve_secret_ref
from herald.gateway.session_keys import SessionKeyError, build_session_key, validate_session_key
from herald.gateway.splitting import split_message, utf16_length

if TYPE_CHECKING:
    from herald.gateway.media import receive_file
    from herald.gateway.runner import GatewayRunner
    from herald.gateway.testing import LoopbackAdapter

_LAZY = {
    "GatewayRunner": "herald.gateway.runner",
    "LoopbackAdapter": "herald.gateway.testing",
    "receive_file": "herald.gateway.media",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'herald.gateway' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "Button",
    "ChatType",
    "DispatchResult",
    "EventSink",
    "GatewayRunner",
    "InboundFile",
    "LoopbackAdapter",
    "MessageEvent",
    "PlatformAdapter",
    "SendResult",
    "SessionKeyError",
    "StreamCallbacks",
    "UnservedProfileError",
    "build_session_key",
    "receive_file",
    "resolve_profile",
    "resolve_secret_ref",
    "split_message",
    "utf16_length",
    "validate_session_key",
]
