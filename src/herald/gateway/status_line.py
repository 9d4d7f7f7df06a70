"""The status line: one message, edited in place, saying what a running turn does.

Only where the adapter `supports_edits()` (elsewhere a message per tool would be
spam). The first update is sent at once; later ones are coalesced so the message is
edited at most once per `interval` (platforms rate-limit edits), always ending on
the latest text. `finalize` makes the last edit ("done · 3 tools · 12 s"); a turn
too quick to post any status leaves no trace. Every text is redacted.

Sub-agents (`delegate_task`) report one line each ("sub-agent 2 [running 4s] …");
each keeps its own line under the parent's latest step, updated in place, so a
fan-out of three shows all three rather than whichever spoke last.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable

from herald.delegation.board import child_of
from herald.gateway.contracts import PlatformAdapter
from herald.safety import redact

log = logging.getLogger(__name__)

MAX_STATUS_CHARS = 120
MAX_CHILD_LINES = 8  # a bigger fan-out shows its latest children
_PREFERRED_ARGS = ("command", "path", "query", "url", "question", "pattern", "action")


def describe_tool(name: str, arguments: str) -> str:
    """ "running terminal: pytest -x" from a tool name and its raw JSON arguments."""
    detail = ""
    try:
        args = json.loads(arguments) if arguments else {}
    except ValueError:
        args = {}
    if isinstance(args, dict):
        for key in (*_PREFERRED_ARGS, *args):
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                detail = " ".join(value.split())
                break
    text = f"running {name}: {detail}" if detail else f"running {name}"
    return shorten(text)


def shorten(text: str, limit: int = MAX_STATUS_CHARS) -> str:
    text = redact(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class StatusLine:
    def __init__(
        self,
        adapter: PlatformAdapter,
        chat_id: str,
        thread_id: str | None,
        *,
        interval: float,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.adapter = adapter
        self.chat_id = chat_id
        self.thread_id = thread_id
        self.interval = interval
        self.enabled = enabled and adapter.supports_edits()
        self.clock = clock
        self.message_id: str | None = None
        self.shown: str | None = None
        self.edits = 0
        self._latest: str | None = None
        self._step: str | None = None  # the parent's latest status
        self._children: dict[str, str] = {}  # sub-agent label -> its latest line
        self._last_write = 0.0
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._writing = False

    def update(self, text: str) -> None:
        """Called on the event loop; cheap, never blocks."""
        if not self.enabled or self._closed:
            return
        child = child_of(text)
        if child is not None:
            self._children[child] = shorten(text)  # in place: lines never jump
        else:
            self._step = shorten(text)
        self._latest = self._render()
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._flush())

    def _render(self) -> str:
        lines = list(self._children.values())
        children = [f"  {line}" for line in lines[-MAX_CHILD_LINES:]]
        if len(lines) > MAX_CHILD_LINES:
            children.insert(0, f"  … {len(lines) - MAX_CHILD_LINES} earlier sub-agents")
        return "\n".join(["⚙ " + (self._step or "working"), *children])

    async def _flush(self) -> None:
        while self._latest is not None and self._latest != self.shown and not self._closed:
            wait = self._last_write + self.interval - self.clock()
            if self.message_id is not None and wait > 0:
                await asyncio.sleep(wait)
                continue
            await self._write(self._latest)

    async def _write(self, text: str) -> None:
        self._last_write = self.clock()
        self.shown = text
        self._writing = True
        try:
            if self.message_id is None:
                result = await self.adapter.send(self.chat_id, text, thread_id=self.thread_id)
                if result.ok and result.message_ids:
                    self.message_id = result.message_ids[0]
                else:
                    self.enabled = False  # refused, or nothing to edit later: stop trying
                    self._latest = None
            else:
                await self.adapter.edit(self.chat_id, self.message_id, text)
                self.edits += 1
        except Exception as exc:  # a status line is decoration; never fail the turn
            log.info("status line update failed: %s", exc)
        finally:
            self._writing = False

    async def finalize(self, text: str | None) -> None:
        """Stop updating; make the last edit if a status message exists."""
        self._closed = True
        task = self._task
        if task is not None and not task.done():
            if not self._writing:
                task.cancel()  # only ever cancelled while it waits, never mid-send
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        if self.message_id is not None and text:
            try:
                await self.adapter.edit(self.chat_id, self.message_id, shorten(text))
                self.edits += 1
            except Exception as exc:
                log.info("status line finalize failed: %s", exc)


__all__ = ["StatusLine", "describe_tool", "shorten"]
