"""What the fake Slack server records, and how tests script its Web API failures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_TEXT_LENGTH = 40_000  # chat.postMessage truncates past this; the fake refuses (msg_too_long)


@dataclass(frozen=True)
class ApiCall:
    method: str
    args: dict[str, Any]
    ok: bool
    status: int = 200


@dataclass
class PostedMessage:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    thread_ts: str | None = None
    ephemeral_user: str | None = None
    metadata: dict[str, Any] | None = None  # chat.postMessage's message metadata

    def buttons(self) -> list[dict[str, Any]]:
        return [
            element
            for block in self.blocks
            if block.get("type") == "actions"
            for element in block.get("elements", [])
            if element.get("type") == "button"
        ]


@dataclass(frozen=True)
class UpdateRecord:
    channel: str
    ts: str
    text: str | None
    blocks: list[dict[str, Any]] | None


@dataclass(frozen=True)
class UploadRecord:
    file_id: str
    filename: str
    data: bytes
    channel: str | None
    thread_ts: str | None
    initial_comment: str | None


@dataclass
class Envelope:
    """One Socket Mode envelope (or HTTP delivery) and what became of it."""

    envelope_id: str
    type: str  # events_api | interactive | slash_commands
    payload: dict[str, Any]
    retry_attempt: int = 0
    acked: bool = False
    ack_payload: dict[str, Any] | None = None


@dataclass
class Fault:
    """The next `times` calls of `method` fail: with a Slack `error` (HTTP 200, ok=false),
    an HTTP `status` (429 carries Retry-After), or a cut connection (`drop`)."""

    method: str
    error: str = "internal_error"
    status: int = 200
    times: int = 1
    drop: bool = False
    retry_after: int = 1


@dataclass
class SocketCounters:
    connections_opened: int = 0  # apps.connections.open answers
    connections: int = 0  # websockets accepted
    envelopes_sent: int = 0
    acks: int = 0
    pings: int = 0
    drops: int = 0
    http_deliveries: list[int] = field(default_factory=list)  # status per HTTP POST
