"""Where a job's results and notices go: ``log``, ``file:PATH`` or ``PLATFORM:CHAT[:THREAD]``.

Local targets are written at once. A platform target goes into the outbox as
``queued``; a gateway of this home delivers it through its delivery ledger and
marks it ``delivered`` only when the platform acknowledged every part (or ``dead``
when the chat is gone). Until a gateway runs, it stays queued — never dropped.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from herald.config import HeraldConfig
from herald.config.shared_file import append_shared_file
from herald.cron.confine import (
    DeliveryTarget,
    confined_relative,
    delivery_refusal,
    open_confined,
)
from herald.environments import LocalEnvironment
from herald.safety import redact
from herald.tools import ToolContext
from herald.tools.terminal_approval import CommandRefused
from herald.tools.write_gate import gate_write

if TYPE_CHECKING:
    from herald.config import HeraldHome
    from herald.cron.store import CronStore, OutboxItem

log = logging.getLogger("herald.cron")

TARGET_EXAMPLES = "'log', 'file:~/reports/daily.md' or 'telegram:123456789'"
_PLATFORM_RE = re.compile(r"^([a-z][a-z0-9_-]*):([^:\s]+)(?::([^:\s]+))?$")


def _append_whole(fd: int, data: bytes) -> None:
    """Append one record to a file opened safely (no symlink followed) and close it.
    Several jobs and processes may deliver to one file: the record goes in whole under
    a lock on the file itself (append-only, never replaced, so its own lock is sound;
    a lock file beside a path not yet proved safe could land outside), and durably."""
    view = memoryview(data)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock


_APPEND_MODE = 0o666  # as open("a") made it: the umask decides who may read job output


class TargetError(ValueError):
    """A delivery target that cannot be used."""


@dataclass(frozen=True)
class SendOutcome:
    ok: bool
    dead: bool = False
    error: str | None = None


# (platform, chat_id, thread_id, text, ledger key) -> outcome; supplied by the gateway.
Sender = Callable[[str, str, str | None, str, str], Awaitable[SendOutcome]]


def parse_target(text: str, home: HeraldHome) -> DeliveryTarget:
    text = (text or "").strip()
    if text == "log":
        return DeliveryTarget("log")
    if text.startswith("file:"):
        raw = text[5:].strip()
        if not raw:
            raise TargetError(f"'file:' needs a path, e.g. {TARGET_EXAMPLES}")
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = Path(home.cron_dir) / "output" / path
        return DeliveryTarget("file", path=path)
    m = _PLATFORM_RE.match(text)
    if m and m.group(1) not in ("log", "file"):
        return DeliveryTarget("platform", platform=m.group(1), chat_id=m.group(2),
                              thread_id=m.group(3))  # fmt: skip
    raise TargetError(f"cannot deliver to {text!r}: use {TARGET_EXAMPLES}")


def deliver(
    store: CronStore,
    home: HeraldHome,
    *,
    job_name: str,
    target_text: str,
    what: str,
    text: str,
    run_id: int | None = None,
    created_by: str = "unknown",
    origin: str | None = None,
    config: HeraldConfig | None = None,
) -> OutboxItem:
    """Write to a local target now, or queue for a platform; always leaves an outbox row.
    `created_by` and `origin` are the job's (`herald.cron.confine`): a job the owner did
    not make at the CLI may not deliver outside ``cron/output`` or its own chat, checked
    here again because the row may have changed since it was made; the default is the
    confined one, so a caller that forgets them cannot widen anything."""
    text = redact(text)
    try:
        target = parse_target(target_text, home)
    except TargetError as exc:  # a target broken after creation: still say it in the log
        log.error("cron job %s: %s; the %s went to the log instead", job_name, exc, what)
        _write_log(home, job_name, what, text)
        return store.queue(job_name, run_id, "log", what, text, status="delivered", error=str(exc))
    refusal = delivery_refusal(target, target_text, home, job_name=job_name,
                               created_by=created_by, origin=origin)  # fmt: skip
    if refusal is not None:
        log.error("cron job %s: %s; the %s went to the log instead", job_name, refusal, what)
        _write_log(home, job_name, what, text)
        return store.queue(job_name, run_id, target_text, what, text, status="dead",
                           error=f"refused: {refusal}")  # fmt: skip
    if target.kind == "platform":
        return store.queue(job_name, run_id, target_text, what, text)
    try:
        if target.kind == "file":
            assert target.path is not None
            stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
            body = f"## {job_name} — {what} — {stamp}\n\n{text.rstrip()}\n\n".encode()
            rel = confined_relative(target.path, home)
            if rel is not None:
                fd = open_confined(home, rel)
            else:  # the owner's own path: the same write gate as write_file, then open it
                fd = _open_gated(target.path, home, config)
            _append_whole(fd, body)
        else:
            _write_log(home, job_name, what, text)
    except (OSError, CommandRefused) as exc:
        log.error("cron job %s: could not write its %s to %s: %s", job_name, what, target_text, exc)
        _write_log(home, job_name, what, text)
        return store.queue(job_name, run_id, target_text, what, text, status="dead",
                           error=str(exc))  # fmt: skip
    return store.queue(job_name, run_id, target_text, what, text, status="delivered")


def _open_gated(path: Path, home: HeraldHome, config: HeraldConfig | None) -> int:
    """Append to an owner-chosen file: the real path (symlinks resolved) must pass
    `gate_write` as an unattended write would, like ``write_file`` from a cron turn."""
    real = Path(os.path.realpath(path))
    ctx = ToolContext(home=home, config=config or HeraldConfig(), surface="cron")
    gate_write("cron delivery", str(real), ctx, LocalEnvironment(cwd=str(home.root)))
    real.parent.mkdir(parents=True, exist_ok=True)
    return os.open(real, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)


def _write_log(home: HeraldHome, job_name: str, what: str, text: str) -> None:
    log.info("cron job %s %s:\n%s", job_name, what, text)
    path = Path(home.logs_dir) / "cron.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    record = f"{stamp} [{job_name}] {what}:\n{text.rstrip()}\n\n"
    append_shared_file(path, record, default_mode=_APPEND_MODE)


async def flush_outbox(store: CronStore, home: HeraldHome, send: Sender) -> int:
    """Deliver every queued platform item through `send`; the number delivered."""
    delivered = 0
    for item in store.outbox(status="queued"):
        try:
            target = parse_target(item.target, home)
        except TargetError as exc:
            store.mark_outbox(item.id, "dead", str(exc))
            continue
        if target.kind != "platform":
            continue
        assert target.platform is not None and target.chat_id is not None
        try:
            outcome = await send(
                target.platform, target.chat_id, target.thread_id, item.text, f"cron:{item.id}"
            )
        except Exception as exc:  # a send bug must not stop the other deliveries
            outcome = SendOutcome(ok=False, error=str(exc) or type(exc).__name__)
        if outcome.ok:
            store.mark_outbox(item.id, "delivered")
            delivered += 1
        elif outcome.dead:
            store.mark_outbox(item.id, "dead", outcome.error)
            log.warning("cron %s for %s: %s is gone (%s)", item.what, item.job_name,
                        item.target, outcome.error)  # fmt: skip
        else:
            store.mark_outbox(item.id, "queued", outcome.error)
    return delivered


__all__ = [
    "TARGET_EXAMPLES",
    "DeliveryTarget",
    "SendOutcome",
    "Sender",
    "TargetError",
    "deliver",
    "flush_outbox",
    "parse_target",
]
