"""One Bot API write with Telegram's recoverable failures handled and the rest classified.

Recoverable, each at most once per write: HTML the server will not parse (sent again
as plain text, so formatting never loses a message), a forum topic that no longer
exists (sent to the chat itself), flood control (wait `retry_after` if it is short,
then try once more) and a group that became a supergroup (sent to its new id).
Everything else becomes a `SendResult`: a blocked bot, a kicked bot or a chat that
does not exist is a permanent failure, so the runner stops writing there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from telegram import Message
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)

from herald.gateway.contracts import SendResult
from herald.gateway.platforms.telegram.events import period_seconds

log = logging.getLogger(__name__)

# Bad Request texts that mean the chat is gone for good (403 Forbidden always does).
_GONE = (
    "chat not found",
    "group chat was deactivated",
    "user is deactivated",
    "peer_id_invalid",
    "bot was kicked",
    "bot is not a member",
)
NOT_MODIFIED = "message is not modified"


@dataclass
class Attempt:
    """How the next try is made; each recovery changes one field, once."""

    chat_id: int
    html: bool = True
    thread_id: int | None = None
    waited: bool = False
    migrated: bool = False


Operation = Callable[[Attempt], Awaitable[Message | bool]]


async def deliver(
    operation: Operation,
    attempt: Attempt,
    *,
    max_retry_after: float,
    on_migrated: Callable[[int, int], None],
    ok_when_not_modified: bool = False,
) -> SendResult:
    while True:
        try:
            result = await operation(attempt)
        except RetryAfter as error:
            delay = period_seconds(error, "retry_after")
            if attempt.waited or delay > max_retry_after:
                return SendResult(
                    ok=False, error=f"Telegram flood control: retry after {delay:g} s"
                )
            log.info("telegram: flood control on chat %s, waiting %g s", attempt.chat_id, delay)
            attempt.waited = True
            await asyncio.sleep(delay)
            continue
        except ChatMigrated as error:
            new_id = int(error.new_chat_id)
            if attempt.migrated:
                return SendResult(ok=False, error=f"Telegram: chat moved again to {new_id}")
            log.info("telegram: chat %s is now supergroup %s", attempt.chat_id, new_id)
            on_migrated(attempt.chat_id, new_id)
            attempt.chat_id, attempt.migrated = new_id, True
            continue
        except BadRequest as error:
            text = error.message.lower()
            if ok_when_not_modified and NOT_MODIFIED in text:
                return SendResult(ok=True)
            if attempt.html and "can't parse entities" in text:
                log.warning("telegram: HTML refused (%s); sending as plain text", error.message)
                attempt.html = False
                continue
            if attempt.thread_id is not None and "thread not found" in text:
                log.info("telegram: topic %s is gone; writing to the chat", attempt.thread_id)
                attempt.thread_id = None
                continue
            return failure(error)
        except TelegramError as error:
            return failure(error)
        if isinstance(result, Message):
            return SendResult(ok=True, message_ids=[str(result.message_id)])
        return SendResult(ok=bool(result))


def failure(error: TelegramError) -> SendResult:
    """A `SendResult` for an error no retry here can fix."""
    text = error.message
    if isinstance(error, Forbidden):
        return SendResult(ok=False, permanent_failure=True, error=f"Telegram: {text}")
    if isinstance(error, BadRequest):
        gone = any(marker in text.lower() for marker in _GONE)
        return SendResult(ok=False, permanent_failure=gone, error=f"Telegram: {text}")
    if isinstance(error, InvalidToken):
        return SendResult(ok=False, error="Telegram rejected the bot token")
    if isinstance(error, TimedOut):
        # The request may have reached Telegram; the runner's ledger decides on a retry.
        return SendResult(ok=False, error="Telegram did not answer in time")
    if isinstance(error, NetworkError):
        return SendResult(ok=False, error=f"cannot reach Telegram: {text}")
    return SendResult(ok=False, error=f"Telegram: {text}")
