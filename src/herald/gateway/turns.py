"""Running one turn of a cached agent in the thread pool, wired to the chat.

The turn is started with `agent.start_turn(text, callbacks=..., humans=...)` on the
gateway's executor; the returned `TurnHandle` is the only way to stop or steer it,
so nothing of one message (callbacks, approvals, a stop, a steer) can reach the
next. The engine calls its callbacks from the turn thread; each is handed to the
event loop with `call_soon_threadsafe`, where the status line, the stream and the
phase of the turn are updated. Approvals and clarify questions block the tool
thread while the question is posted through the loop. A `/stop` or steer that
arrives before the turn has a handle is kept on the `ActiveTurn` and applied the
moment the handle exists (both happen on the event loop, so none can slip by).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from herald.config.schema_gateway import GatewayConfig
from herald.gateway.approvals import ChatPrompts
from herald.gateway.contracts import Button, MessageEvent, PlatformAdapter, StreamCallbacks
from herald.gateway.delivery import Deliverer, Target
from herald.gateway.status_line import StatusLine, describe_tool, shorten
from herald.gateway.stream import StreamRedactor

if TYPE_CHECKING:
    from herald.engine import Agent, Humans, TurnCallbacks, TurnHandle, TurnResult

log = logging.getLogger(__name__)

Phase = Literal["preparing", "command", "model", "tool", "approval"]
POST_TIMEOUT = 30.0
TYPING_SETTLE_SECONDS = 2.0  # how long a turn's end waits for its last typing indicator
TYPING_ABANDON_SECONDS = 300.0  # after which one still not answered is cancelled after all


@dataclass
class WorkItem:
    event: MessageEvent
    adapter: PlatformAdapter
    text: str
    key: str  # delivery-ledger key of the reply
    future: asyncio.Future[Any]
    stream: StreamCallbacks | None = None
    kind: Literal["message", "steer", "resume", "command"] = "message"
    command: tuple[str, str] | None = None
    images: tuple[str, ...] = ()  # saved photos the turn shows the model (gateway.media)
    heard_voice: bool = False  # the message was a voice note (voice.reply: auto)


@dataclass
class ActiveTurn:
    """One work item being handled; touched only on the event loop."""

    item: WorkItem
    agent: Agent | None = None
    handle: TurnHandle | None = None
    phase: Phase = "preparing"
    stop_reason: str | None = None  # user | busy | shutdown
    steered: list[WorkItem] = field(default_factory=list)
    tools: int = 0
    started: float = field(default_factory=time.monotonic)
    # Set by a stop: wakes a question this turn is waiting on (approval, clarify).
    stopped: threading.Event = field(default_factory=threading.Event)
    _early_steer: list[str] = field(default_factory=list)

    def stop(self, reason: str) -> None:
        self.stop_reason = self.stop_reason or reason
        self.stopped.set()
        if self.handle is not None:
            self.handle.interrupt()

    def steer(self, text: str) -> bool:
        """Pass `text` to this turn; False when the turn has already ended (the caller
        sends it as a message of its own)."""
        if self.handle is None:
            self._early_steer.append(text)
            return True
        return self.handle.steer(text)

    def attach(self, handle: TurnHandle) -> None:
        """The turn has started: apply what arrived before it had a handle."""
        self.handle = handle
        for text in self._early_steer:
            handle.steer(text)
        self._early_steer.clear()
        if self.stop_reason is not None:
            handle.interrupt()


def target_of(event: MessageEvent) -> Target:
    return Target(event.platform, event.chat_id, event.thread_id, event.message_id)


class TurnDriver:
    def __init__(
        self,
        *,
        config: GatewayConfig,
        deliverer: Deliverer,
        executor: Executor,
        approval_timeout: Callable[[Any], float],
    ):
        self.config = config
        self.deliverer = deliverer
        self.executor = executor
        self.approval_timeout = approval_timeout
        self._notices: set[asyncio.Future[Any]] = set()

    async def run(self, active: ActiveTurn, prompts: ChatPrompts) -> TurnResult:
        item, agent = active.item, active.agent
        loop = asyncio.get_running_loop()
        push = item.adapter.push_replies
        status = StatusLine(
            item.adapter,
            item.event.chat_id,
            item.event.thread_id,
            interval=self.config.status_edit_interval,
            enabled=push,
        )
        stream = StreamRedactor(item.stream.on_text_delta) if item.stream else None
        assert agent is not None
        callbacks = self._callbacks(active, status, stream, loop)
        humans = self._humans(agent, active, prompts, loop) if push else None  # None: unattended
        typing_over = asyncio.Event()
        typing = asyncio.ensure_future(self._keep_typing(item, typing_over)) if push else None
        try:
            text, images = await self._attach_images(agent, item)
            active.phase = "model"
            handle = agent.start_turn(
                text, callbacks=callbacks, humans=humans, executor=self.executor, images=images
            )
            active.attach(handle)
            ended: asyncio.Future[None] = loop.create_future()
            handle.add_done_callback(lambda _h: _threadsafe(loop, _settle, ended))
            await ended
            result = handle.result()
        finally:
            typing_over.set()
            if stream is not None:
                stream.flush()
            await status.finalize(self._final_status(active))
            if typing is not None:
                await self._typing_landed(typing)
        return result

    async def _attach_images(self, agent: Agent, item: WorkItem) -> tuple[str, list[Any]]:
        """The item's photos kept under the agent's home as ``--image`` keeps them; one
        that cannot be used is named in the text instead of failing the turn."""
        if not item.images:
            return item.text, []
        from herald.providers.images import ImageError

        loop = asyncio.get_running_loop()
        refs, notes = [], []
        for path in item.images:
            try:
                refs.append(await loop.run_in_executor(self.executor, agent.attach_image, path))
            except ImageError as exc:
                notes.append(f"[{path} could not be shown to you as an image: {exc}]")
        return "\n".join([item.text, *notes]) if notes else item.text, refs

    # ---- per-turn wiring ------------------------------------------------------------------

    def _callbacks(
        self,
        active: ActiveTurn,
        status: StatusLine,
        stream: StreamRedactor | None,
        loop: asyncio.AbstractEventLoop,
    ) -> TurnCallbacks:
        from herald.engine import TurnCallbacks

        def on_tool_start(name: str, arguments: str) -> None:
            active.phase = "tool"
            active.tools += 1
            if stream is not None:  # the model call that asked for tools ended well
                _threadsafe(loop, stream.release)
            _threadsafe(loop, status.update, describe_tool(name, arguments))

        def on_tool_end(_name: str, _result: str, _is_error: bool) -> None:
            active.phase = "model"

        def on_status(message: str) -> None:
            _threadsafe(loop, status.update, message)

        on_delta = on_discard = None
        if stream is not None:

            def on_delta(text: str) -> None:
                _threadsafe(loop, stream.feed, text)

            def on_discard() -> None:
                _threadsafe(loop, stream.discard)

        def on_learning(notice: str) -> None:
            """The background review finished after the reply: tell the chat in one line."""
            if not active.item.adapter.push_replies:
                return
            item = active.item

            def post() -> None:
                task = asyncio.ensure_future(
                    self.deliverer.deliver(
                        item.adapter,
                        target_of(item.event),
                        f"Learned: {notice}.",
                        key=f"{item.key}:learning",
                    )
                )
                self._notices.add(task)  # keep a reference until it is sent
                task.add_done_callback(self._notices.discard)

            try:
                loop.call_soon_threadsafe(post)
            except RuntimeError:  # the gateway stopped meanwhile
                log.info("learning notice not delivered (gateway stopped): %s", notice)

        return TurnCallbacks(
            on_text_delta=on_delta,
            on_tool_start=on_tool_start,
            on_tool_end=on_tool_end,
            on_status=on_status,
            on_learning=on_learning,
            on_stream_discard=on_discard,
        )

    def _humans(
        self,
        agent: Agent,
        active: ActiveTurn,
        prompts: ChatPrompts,
        loop: asyncio.AbstractEventLoop,
    ) -> Humans:
        from herald.engine import Humans

        item = active.item
        adapter = item.adapter
        target = Target(item.event.platform, item.event.chat_id, item.event.thread_id)
        cancel = active.stopped
        timeout = self.approval_timeout(agent)

        def post(text: str, buttons: list[list[Button]] | None) -> None:
            future = asyncio.run_coroutine_threadsafe(
                self.deliverer.deliver(adapter, target, text, buttons=buttons), loop
            )
            report = future.result(POST_TIMEOUT)
            if not report.ok:
                raise RuntimeError(report.error or "the question could not be posted")

        def approve(prompt: Any) -> str | None:
            previous, active.phase = active.phase, "approval"
            try:
                return prompts.approve(
                    prompt,
                    post=post,
                    buttons=adapter.supports_buttons(),
                    timeout=timeout,
                    cancel=cancel,
                    on_timeout=lambda: post(
                        f"No answer within {timeout:.0f} s: the command was not run.", None
                    ),
                )
            finally:
                active.phase = previous

        def clarify(question: str, choices: list[str] | None) -> str | None:
            previous, active.phase = active.phase, "approval"
            try:
                return prompts.clarify(
                    question,
                    choices,
                    post=post,
                    timeout=self.config.clarify_timeout_seconds,
                    cancel=cancel,
                )
            finally:
                active.phase = previous

        return Humans(approve=approve, clarify=clarify)

    async def _keep_typing(self, item: WorkItem, over: asyncio.Event) -> None:
        """A typing indicator every `typing_interval` until `over` is set. The loop is
        told to stop, never cancelled: not every HTTP client survives a request cut off
        half-way (httpcore 1.0.9 keeps the connection of one cancelled just after it
        connected open and unusable for good, encode/httpcore#1093), and a gateway ends
        thousands of turns."""
        while not over.is_set():
            try:
                await item.adapter.typing(item.event.chat_id, item.event.thread_id)
            except Exception as exc:  # decoration only
                log.debug("typing indicator failed: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(over.wait(), self.config.typing_interval)

    async def _typing_landed(self, typing: asyncio.Future[None]) -> None:
        """The typing loop has been told to stop; an indicator still on its way gets a
        moment to land, so the reply sent next is not followed by a stale "typing…". One
        that takes longer finishes on its own."""
        await asyncio.wait({typing}, timeout=TYPING_SETTLE_SECONDS)
        if not typing.done():
            self._notices.add(typing)  # keep a reference until it ends
            typing.add_done_callback(self._notices.discard)
            # The platforms' own clients time out well before this; an adapter whose
            # call never returns must not keep a task per turn for the gateway's life.
            asyncio.get_running_loop().call_later(TYPING_ABANDON_SECONDS, typing.cancel)

    @staticmethod
    def _final_status(active: ActiveTurn) -> str:
        seconds = time.monotonic() - active.started
        tools = f"{active.tools} tool call{'s' if active.tools != 1 else ''}"
        if active.stop_reason == "shutdown":
            return shorten(f"⏸ paused for a restart · {tools} · {seconds:.0f} s")
        if active.stop_reason is not None:
            return shorten(f"■ stopped · {tools} · {seconds:.0f} s")
        return shorten(f"✓ done · {tools} · {seconds:.0f} s")


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _threadsafe(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop is closed: the gateway is gone, nobody to show it to
        pass


__all__ = ["ActiveTurn", "Phase", "TurnDriver", "WorkItem", "target_of"]
