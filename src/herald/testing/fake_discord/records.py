"""What the fake Discord server records, and how tests script its REST failures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_MESSAGE_LENGTH = 2000  # Discord refuses longer message content (50035)


@dataclass(frozen=True)
class ApiCall:
    method: str
    path: str
    body: dict[str, Any] | None
    status: int


@dataclass(frozen=True)
class UploadedFile:
    filename: str
    data: bytes


@dataclass
class SentMessage:
    """A message the bot created (a channel message, an interaction reply or followup)."""

    channel_id: int
    message_id: int
    content: str
    components: list[dict[str, Any]] = field(default_factory=list)
    files: list[UploadedFile] = field(default_factory=list)
    reply_to: int | None = None
    via: str = "channel"  # "channel" | "interaction" | "followup"
    ephemeral: bool = False

    def buttons(self) -> list[dict[str, Any]]:
        return [
            item
            for row in self.components
            for item in row.get("components", [])
            if item.get("type") == 2
        ]


@dataclass(frozen=True)
class EditRecord:
    channel_id: int
    message_id: int
    content: str | None
    components: list[dict[str, Any]] | None


@dataclass(frozen=True)
class InteractionResponse:
    interaction_id: int
    type: int  # 4 message, 5 deferred, 6 deferred update, 7 update message
    data: dict[str, Any]


@dataclass
class Fault:
    """The next `times` REST calls matching `method` and `path_contains` fail.

    ``drop=True`` cuts the connection without an answer; ``status=429`` answers with
    Discord's rate-limit body and headers (``retry_after`` seconds)."""

    method: str
    path_contains: str = ""
    status: int = 500
    times: int = 1
    drop: bool = False
    retry_after: float = 0.1
    is_global: bool = False
    uploads_only: bool = False  # only requests that carry files

    def matches(self, method: str, path: str, uploading: bool = False) -> bool:
        if self.method not in ("*", method.upper()):
            return False
        if self.uploads_only and not uploading:
            return False
        return self.path_contains in path


@dataclass
class GatewayCounters:
    connections: int = 0
    identifies: int = 0
    resumes: int = 0
    resumes_refused: int = 0
    heartbeats: int = 0
    acks_sent: int = 0
    drops: int = 0
    intents: list[int] = field(default_factory=list)
