"""Files out: the chat port the `send_file` tool uploads through (herald.tools.ports.ChatFiles).

The runner makes one `ChatFileSender` per session when it builds the session's agent, for
the chat (and thread) the conversation is in; the tool never names a destination. The
upload goes through the runner's `Deliverer` (delivery ledger, dead-chat marks, the
adapter's health recorder), on the gateway's event loop, while the tool thread waits.

Who reaches it: the model of a gateway chat session (owner, member or guest identity,
attended on push platforms; webhook and API turns have no chat port). What a hijacked
model could do with it: post a file of the workdir to this same chat. The gates in
herald.tools.send_file decide which file (taint rule, read gate, Herald's home refused,
owner approval for group chats, size); this module decides only where: here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import mimetypes
import uuid
from dataclasses import dataclass

from herald.gateway.contracts import OutgoingFile, PlatformAdapter, cannot_send_files
from herald.gateway.delivery import Deliverer, Target
from herald.gateway.inbox import safe_file_name


@dataclass(frozen=True)
class ChatFileSender:
    loop: asyncio.AbstractEventLoop
    deliverer: Deliverer
    adapter: PlatformAdapter
    target: Target
    shared: bool  # a group or channel: other people see what is sent
    max_bytes: int
    timeout: float

    @property
    def platform(self) -> str:
        return self.adapter.name

    def unsupported(self) -> str | None:
        return None if self.adapter.supports_files() else cannot_send_files(self.adapter.name)

    def send(self, name: str, data: bytes, caption: str) -> str:
        file = OutgoingFile(
            safe_file_name(name, "file"),
            data,
            mimetypes.guess_type(name)[0] or "application/octet-stream",
        )
        key = f"file:{self.target.platform}:{self.target.chat_id}:{uuid.uuid4().hex}"
        future = asyncio.run_coroutine_threadsafe(
            self.deliverer.deliver_file(
                self.adapter, self.target, file, caption=caption or None, key=key
            ),
            self.loop,
        )
        try:
            report = future.result(self.timeout)
        except concurrent.futures.TimeoutError:
            raise RuntimeError("the platform did not confirm the upload in time") from None
        if not report.ok:
            raise RuntimeError(report.error or "the platform refused the file")
        where = "this group chat" if self.shared else "this chat"
        return f"Sent {file.name} ({len(data):,} bytes) to {where}."


def chat_file_sender(
    deliverer: Deliverer,
    adapter: PlatformAdapter,
    target: Target,
    *,
    shared: bool,
    max_bytes: int,
) -> ChatFileSender | None:
    """The port for a session of `adapter`'s chat `target`; None for a platform without
    chats to push to (the API, a webhook answered in its response)."""
    if not adapter.push_replies:
        return None
    return ChatFileSender(
        asyncio.get_running_loop(),
        deliverer,
        adapter,
        Target(target.platform, target.chat_id, target.thread_id),
        shared,
        max_bytes,
        deliverer.timeout * 3 + 10,
    )


__all__ = ["ChatFileSender", "chat_file_sender"]
