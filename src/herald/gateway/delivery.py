"""Delivering text to a chat: redact, split, send part by part, record each part.

Every part goes through the delivery ledger (`gateway_deliveries`) under a key that
is stable for one reply (``reply:<platform>:<chat>:<message id>`` for the answer to
a message), so delivering the same key again sends only the parts not yet recorded
as sent. A send that times out is not repeated while it may still land: the runner
keeps waiting on the same attempt (its success is recorded whenever it arrives) and
only sends again after an attempt came back failed and the ledger still shows the
part unsent. A permanent failure (chat deleted, bot removed) marks the target dead;
later deliveries to it are skipped until the chat writes to us again.

With an outbox (`herald.state.gateway_liveness.Outbox`), the whole text of each reply
is recorded before its first part is sent and settled after (delivered, dead, or
failed with the time of the next try), so the watchdog retries what could not be sent
— after a platform outage or a restart — with backoff. Every send is also reported to
the adapter's health recorder (a landed send; a failure that is not the chat's fault).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field

from herald.gateway.contracts import (
    Button,
    OutgoingFile,
    PlatformAdapter,
    SendResult,
    cannot_send_files,
)
from herald.gateway.splitting import split_message
from herald.safety import redact
from herald.state.gateway_liveness import Outbox
from herald.state.gateway_tables import GatewayState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    platform: str
    chat_id: str
    thread_id: str | None = None
    reply_to: str | None = None


@dataclass
class DeliveryReport:
    parts: int = 0
    sent: int = 0
    skipped: int = 0  # already in the ledger as sent
    message_ids: list[str] = field(default_factory=list)
    dead: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not self.dead and self.error is None


def notice_key() -> str:
    return f"notice:{uuid.uuid4().hex}"


class Deliverer:
    def __init__(
        self,
        state: GatewayState,
        *,
        timeout: float,
        retries: int,
        retry_delay: float = 1.0,
        outbox: Outbox | None = None,
        backoff: float = 5.0,
        backoff_max: float = 900.0,
    ):
        self.state = state
        self.timeout = timeout
        self.retries = retries
        self.retry_delay = retry_delay
        self.outbox = outbox
        self.backoff = backoff
        self.backoff_max = backoff_max
        self._background: set[asyncio.Task[SendResult]] = set()

    def is_dead(self, target: Target) -> bool:
        return self.state.is_dead(target.platform, target.chat_id)

    async def deliver(
        self,
        adapter: PlatformAdapter,
        target: Target,
        text: str,
        *,
        key: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> DeliveryReport:
        key = key or notice_key()
        report = DeliveryReport()
        if self.outbox is not None and not buttons:
            # Owed from now on: a failure below leaves it for the retry loop. (Approval
            # prompts are not: their buttons mean nothing once the turn has moved on.)
            try:
                self.outbox.owe(
                    key,
                    platform=target.platform,
                    chat_id=target.chat_id,
                    thread_id=target.thread_id,
                    reply_to=target.reply_to,
                    text=redact(text),
                )
            except Exception as exc:  # the store is closing: deliver once, without a retry
                log.warning("could not record %s in the outbox: %s", key, exc)
        if self.is_dead(target):
            log.info(
                "not delivering %s: %s chat %s is marked dead", key, target.platform, target.chat_id
            )
            report.dead = True
            self._settle(key, report)
            return report
        parts = split_message(
            redact(text), adapter.max_message_length(target.chat_id), adapter.measure
        )
        report.parts = len(parts)
        recorded = self.state.delivery_parts(key)
        for index, part in enumerate(parts):
            prior = recorded.get(index)
            if prior is not None and prior.status == "sent":
                report.skipped += 1
                if prior.message_id:
                    report.message_ids.append(prior.message_id)
                continue
            last = index == len(parts) - 1
            result = await self._send_part(
                adapter,
                target,
                part,
                key=key,
                index=index,
                count=len(parts),
                buttons=buttons if last else None,
                reply_to=target.reply_to if index == 0 else None,
            )
            if result.ok:
                report.sent += 1
                report.message_ids.extend(result.message_ids[:1])
                continue
            report.dead = result.permanent_failure
            report.error = result.error or "the platform refused the message"
            break
        self._settle(key, report)
        return report

    async def deliver_file(
        self,
        adapter: PlatformAdapter,
        target: Target,
        file: OutgoingFile,
        *,
        caption: str | None = None,
        key: str | None = None,
    ) -> DeliveryReport:
        """Upload one file to the target chat, recorded in the delivery ledger as a
        one-part delivery under `key` (a key already recorded as sent is not sent again).
        It is not put in the outbox: the turn that sent it is still running and tells
        the model what happened, and the model decides whether to try again."""
        key = key or f"file:{uuid.uuid4().hex}"
        report = DeliveryReport(parts=1)
        if not adapter.supports_files():
            report.error = cannot_send_files(adapter.name)
            return report
        if self.is_dead(target):
            report.dead = True
            report.error = "the chat is gone (marked dead after an earlier send)"
            return report
        prior = self.state.delivery_parts(key).get(0)
        if prior is not None and prior.status == "sent":
            report.skipped = 1
            report.message_ids = [prior.message_id] if prior.message_id else []
            return report
        common = {"platform": target.platform, "chat_id": target.chat_id}
        self.state.record_part(key, 0, 1, status="pending", attempt=True, **common)
        try:
            result = await asyncio.wait_for(
                adapter.send_file(
                    target.chat_id,
                    file,
                    caption=redact(caption) if caption else None,
                    reply_to=target.reply_to,
                    thread_id=target.thread_id,
                ),
                self.timeout * 3,  # an upload carries more than a message
            )
        except TimeoutError:
            result = SendResult(ok=False, error="the platform did not answer in time")
        except Exception as exc:  # an adapter bug or a network error
            log.warning("%s file upload failed: %s", adapter.name, exc)
            result = SendResult(ok=False, error=str(exc) or type(exc).__name__)
        if result.ok:
            adapter.health.sent()
            report.sent = 1
            report.message_ids = result.message_ids[:1]
        else:
            if not result.permanent_failure:
                adapter.health.error(f"file upload failed: {result.error}")
            report.dead = result.permanent_failure
            report.error = result.error or "the platform refused the file"
        try:
            self._record(target, key, 0, 1, result)
        except Exception as exc:  # the store is closing: the upload happened or not anyway
            log.error("could not record the file upload %s: %s", key, exc)
        return report

    def _settle(self, key: str, report: DeliveryReport) -> None:
        """Record in the outbox whether the reply is still owed, and when to try again."""
        if self.outbox is None:
            return
        owed = self.outbox.get(key)
        if owed is None:
            return
        try:
            if report.ok:
                self.outbox.settle(key, "delivered")
            elif report.dead:
                self.outbox.settle(key, "dead", error=report.error)
            else:
                wait = min(self.backoff * 2 ** min(owed.attempts, 20), self.backoff_max)
                self.outbox.settle(key, "failed", error=report.error, retry_at=time.time() + wait)
                log.info("%s is still owed; retrying in %.0f s", key, wait)
        except Exception as exc:  # the store is closing: the row stays pending
            log.warning("could not settle %s in the outbox: %s", key, exc)

    async def _send_part(
        self,
        adapter: PlatformAdapter,
        target: Target,
        text: str,
        *,
        key: str,
        index: int,
        count: int,
        buttons: list[list[Button]] | None,
        reply_to: str | None,
    ) -> SendResult:
        attempts = 0
        task: asyncio.Task[SendResult] | None = None
        while True:
            if task is None:
                self.state.record_part(
                    key, index, count, platform=target.platform, chat_id=target.chat_id,
                    status="pending", attempt=True,
                )  # fmt: skip
                task = asyncio.ensure_future(
                    self._send_and_record(
                        adapter, target, text, key, index, count, buttons, reply_to
                    )
                )
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            try:
                result = await asyncio.wait_for(asyncio.shield(task), self.timeout)
            except TimeoutError:
                attempts += 1
                if attempts > self.retries:
                    log.warning(
                        "sending part %d of %s timed out %d times", index + 1, key, attempts
                    )
                    return SendResult(ok=False, error="the platform did not answer in time")
                log.info("sending part %d of %s is slow; still waiting for it", index + 1, key)
                continue  # the same attempt may still land: never send a second copy meanwhile
            if result.ok or result.permanent_failure:
                return result
            attempts += 1
            part = self.state.delivery_parts(key).get(index)
            if part is not None and part.status == "sent":  # an earlier attempt landed late
                return SendResult(ok=True, message_ids=[part.message_id] if part.message_id else [])
            if attempts > self.retries:
                return result
            await asyncio.sleep(self.retry_delay * attempts)
            task = None

    async def _send_and_record(
        self,
        adapter: PlatformAdapter,
        target: Target,
        text: str,
        key: str,
        index: int,
        count: int,
        buttons: list[list[Button]] | None,
        reply_to: str | None,
    ) -> SendResult:
        try:
            result = await adapter.send(
                target.chat_id, text, reply_to=reply_to, thread_id=target.thread_id, buttons=buttons
            )
        except Exception as exc:  # an adapter bug or a network error: a failed attempt
            log.warning("%s send failed: %s", adapter.name, exc)
            result = SendResult(ok=False, error=str(exc) or type(exc).__name__)
        if result.ok:
            adapter.health.sent()
        elif not result.permanent_failure:  # a gone chat says nothing about the link
            adapter.health.error(f"send failed: {result.error}")
        try:
            self._record(target, key, index, count, result)
        except Exception as exc:  # the store is closed (shutdown) or refused: log, go on
            log.error("could not record part %d of %s: %s", index + 1, key, exc)
        return result

    def _record(self, target: Target, key: str, index: int, count: int, result: SendResult) -> None:
        common = {"platform": target.platform, "chat_id": target.chat_id}
        if result.ok:
            message_id = result.message_ids[0] if result.message_ids else None
            self.state.record_part(
                key, index, count, status="sent", message_id=message_id, **common
            )
        elif result.permanent_failure:
            self.state.record_part(key, index, count, status="dead", error=result.error, **common)
            self.state.mark_dead(target.platform, target.chat_id, result.error)
            log.warning(
                "%s chat %s is gone (%s); no more deliveries to it",
                target.platform,
                target.chat_id,
                result.error,
            )
        else:
            self.state.record_part(key, index, count, status="failed", error=result.error, **common)


__all__ = ["Deliverer", "DeliveryReport", "Target", "notice_key"]
