"""The request-shape guard every served HTTP app sits behind (web chat, API, webhooks,
MCP over HTTP): how big a body may be and how deep its JSON may nest, decided per
route before anything parses it.

A stranger's request must not be able to make the gateway hold a large body in
memory, or parse one, before it is refused. So a body is refused by its
``Content-Length`` before a byte of it is read, and a body that does not say its
length (chunked) is counted as it arrives and cut as soon as it passes the limit. A
JSON route's body (small by rule) is buffered and its nesting checked before the app
sees it; other bodies (uploads) stream through the counter. Refusals are 413 (too
large) or 400 (malformed length, too deep), and the message names the limit.

Pure ASGI and free of Herald imports, so every surface can use it whatever its layer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import sub
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
# (status, code, message) -> an ASGI app answering with the surface's own error shape
Refusal = Callable[[int, str, str], ASGIApp]

DEFAULT_JSON_DEPTH = 64
# a JSON string, written as an unrolled loop (plain runs, then escape + run) for speed
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_SLICE = 64 * 1024
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


@dataclass(frozen=True)
class BodyRule:
    """What one route accepts: at most `limit` bytes; with `json_depth`, the body is a
    JSON document checked for nesting before the route parses it."""

    limit: int
    json_depth: int | None = None


RuleFor = Callable[[str, str], BodyRule]  # (method, path) -> the rule for that route


def describe_bytes(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} bytes"


def too_large_message(limit: int) -> str:
    return (
        f"the request body is larger than this route's limit of {describe_bytes(limit)} "
        f"({limit} bytes); send less"
    )


def json_too_deep(raw: bytes, max_depth: int) -> bool:
    """True when the JSON text nests arrays/objects deeper than `max_depth`.

    Strings are blanked first (brackets inside them do not count) and everything but
    brackets dropped, in C-speed byte operations; the running depth is then summed in
    slices by itertools (C as well) and the scan stops at the first slice that goes
    too deep, so a deep body costs one slice and a long shallow one a single pass.
    Malformed bracket soup is left for the JSON parser to reject."""
    steps = _JSON_STRING.sub(b'""', raw).translate(None, _NOT_BRACKETS).translate(_STEP)
    depth = 0
    for start in range(0, len(steps), _SLICE):
        # each byte is 2 (an opener) or 0 (a closer); minus one is the step in depth
        levels = list(accumulate(map(sub, steps[start : start + _SLICE], repeat(1)), initial=depth))
        if max(levels) > max_depth:
            return True
        depth = levels[-1]
    return False


class BodyTooLarge(Exception):
    """Raised inside the guard when a streamed body passes its limit."""


class RequestGuard:
    """ASGI middleware applying `rule_for(method, path)` to every HTTP request."""

    def __init__(self, app: ASGIApp, *, rule_for: RuleFor, refuse: Refusal) -> None:
        self.app = app
        self.rule_for = rule_for
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rule = self.rule_for(scope.get("method", "GET"), scope.get("path", ""))
        declared = _content_length(scope)
        if declared == -1:
            await self._answer(scope, receive, send, 400, "bad_content_length",
                               "the Content-Length header is not a number")  # fmt: skip
            return
        if declared is not None and declared > rule.limit:
            # Refused on the header alone: not one byte of the body is read.
            await self._answer(scope, receive, send, 413, "body_too_large",
                               too_large_message(rule.limit))  # fmt: skip
            return
        if rule.json_depth is not None:
            await self._buffered(scope, receive, send, rule)
        else:
            await self._streamed(scope, receive, send, rule)

    async def _answer(
        self, scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str
    ) -> None:
        await self.refuse(status, code, message)(scope, receive, send)

    async def _buffered(self, scope: Scope, receive: Receive, send: Send, rule: BodyRule) -> None:
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message.get("type") != "http.request":  # the client hung up
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > rule.limit:
                await self._answer(scope, receive, send, 413, "body_too_large",
                                   too_large_message(rule.limit))  # fmt: skip
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        depth = rule.json_depth or DEFAULT_JSON_DEPTH
        if json_too_deep(body, depth):
            await self._answer(scope, receive, send, 400, "json_too_deep",
                               f"the JSON body nests deeper than the limit of {depth} levels")  # fmt: skip
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect as usual

        await self.app(scope, replay, send)

    async def _streamed(self, scope: Scope, receive: Receive, send: Send, rule: BodyRule) -> None:
        seen = 0
        started = False
        cut = False

        async def counted() -> Message:
            nonlocal seen, cut
            message = await receive()
            if message.get("type") == "http.request":
                seen += len(message.get("body", b""))
                if seen > rule.limit:
                    cut = True
                    raise BodyTooLarge
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if cut:
                return  # the app's own answer to the aborted read is not sent
            if message.get("type") == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except Exception:
            # The app may wrap the cut in its own error (or a 500 it tried to send);
            # either way the client is told what happened, and nothing is logged as
            # a crash for what is only an oversized upload.
            if not cut:
                raise
        if cut and not started:
            await self._answer(scope, receive, send, 413, "body_too_large",
                               too_large_message(rule.limit))  # fmt: skip


def _content_length(scope: Scope) -> int | None:
    """The declared length; None when absent, -1 when it is not a plain number."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else -1
    return None


__all__ = [
    "DEFAULT_JSON_DEPTH",
    "BodyRule",
    "RequestGuard",
    "describe_bytes",
    "json_too_deep",
    "too_large_message",
]
