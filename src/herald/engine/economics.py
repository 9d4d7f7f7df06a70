"""What each request carries, and whether the prefix the provider could reuse survived.

`measure_request` splits a request into the system prompt, the tool schemas, the
history the previous request already sent, and the new content since then (bytes,
and tokens estimated at 4 bytes each; an image counts as the ~1,600 tokens a provider
bills for it, not its base64); the four parts sum to the request's size.
`PrefixTracker` compares each request with the session's previous one: when the
system prompt, the tools or an earlier message changed outside a compression or
pruning (the transcript's `rewrites` counter moves for those), the provider's
cache cannot serve the prefix, and the cause is logged and told once per cause.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from herald.providers.images import IMAGE_CHARS_ESTIMATE

log = logging.getLogger(__name__)

BYTES_PER_TOKEN = 4
_DATA_IMAGE = "data:image/"


def _size(value: Any) -> int:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if _DATA_IMAGE in text:  # an image counts as what a provider bills for it
        text = json.dumps(_images_as_estimates(value), ensure_ascii=False, separators=(",", ":"))
    return len(text.encode())


def _images_as_estimates(value: Any) -> Any:
    """`value` with each image data URL replaced by a placeholder the size of its token
    estimate (its base64 is several times what the provider counts for it)."""
    if isinstance(value, str) and value.startswith(_DATA_IMAGE):
        return "i" * (IMAGE_CHARS_ESTIMATE * BYTES_PER_TOKEN // 4)
    if isinstance(value, dict):
        return {k: _images_as_estimates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_images_as_estimates(v) for v in value]
    return value


def _digest(value: Any) -> str:
    data = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(data.encode()).hexdigest()


@dataclass(frozen=True)
class RequestSplit:
    system_bytes: int
    tools_bytes: int
    history_bytes: int
    new_bytes: int
    prefix_break: str | None = None

    @property
    def request_bytes(self) -> int:
        return self.system_bytes + self.tools_bytes + self.history_bytes + self.new_bytes

    @property
    def estimated_tokens(self) -> int:
        return -(-self.request_bytes // BYTES_PER_TOKEN)

    def columns(self) -> dict[str, Any]:
        """The usage-row columns this split fills."""
        return {
            "request_bytes": self.request_bytes,
            "system_bytes": self.system_bytes,
            "tools_bytes": self.tools_bytes,
            "history_bytes": self.history_bytes,
            "new_bytes": self.new_bytes,
            "prefix_break": self.prefix_break,
        }


@dataclass
class PrefixTracker:
    """The previous request of one session, as digests."""

    system: str | None = None
    tools: str | None = None
    messages: list[str] = field(default_factory=list)
    rewrites: int = 0
    expected: str | None = None  # a deliberate change the next request carries
    told: set[str] = field(default_factory=set)

    def expect(self, cause: str) -> None:
        """The next request changes its prefix on purpose (a tool schema was loaded)."""
        self.expected = cause

    def observe(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        rewrites: int,
    ) -> tuple[RequestSplit, str | None]:
        """The split of this request, and a cause to tell the user (None: nothing new)."""
        system_msgs = [m for m in messages[:1] if m.get("role") == "system"]
        body = messages[len(system_msgs) :]
        system = _digest(system_msgs)
        tool_digest = _digest(tools or [])
        digests = [_digest(m) for m in body]
        first = self.system is None
        cause: str | None = None
        if not first and rewrites == self.rewrites:
            if system != self.system:
                cause = "the system prompt changed"
            elif tool_digest != self.tools:
                cause = self.expected or "the tool list changed"
            elif digests[: len(self.messages)] != self.messages:
                cause = "an earlier message changed"
        kept = 0
        if not first and rewrites == self.rewrites:
            while (
                kept < min(len(digests), len(self.messages))
                and digests[kept] == self.messages[kept]
            ):
                kept += 1
        elif not first:
            kept = 0  # compression or pruning rewrote the history: nothing counts as old
        split = RequestSplit(
            system_bytes=sum(_size(m) for m in system_msgs),
            tools_bytes=_size(tools) if tools else 0,
            history_bytes=sum(_size(m) for m in body[:kept]),
            new_bytes=sum(_size(m) for m in body[kept:]),
            prefix_break=cause,
        )
        tell = None
        if cause is not None:
            log.info("request prefix changed: %s (the provider's cache cannot reuse it)", cause)
            deliberate = cause == self.expected
            if not deliberate and cause not in self.told:
                self.told.add(cause)
                tell = cause
        self.system, self.tools, self.messages = system, tool_digest, digests
        self.rewrites, self.expected = rewrites, None
        return split, tell


__all__ = ["BYTES_PER_TOKEN", "PrefixTracker", "RequestSplit"]
