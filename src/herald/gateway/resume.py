"""Auto-resume: continue the turns a restart (or a crash) interrupted.

A turn is recorded in `gateway_inflight` when it starts and cleared when it ends,
so the rows left at boot are exactly the interrupted turns (a graceful stop keeps
the mark of the turns it had to interrupt). For a push platform the agent is rebuilt
— the engine repairs dangling tool calls when it loads the session — the chat gets a
short notice, and a continuation turn runs. The original message is *not* sent
again: it is already in the transcript, with whatever the turn did before it
stopped; the continuation asks the model to check what was done before repeating
anything, so a half-finished action is not blindly redone. Request/response callers
are gone after a restart: their rows are cleared (the repair happens whenever the
session is next used). When the restart-loop guard says no, every chat is told to
send its request again instead.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING

from herald.gateway.contracts import MessageEvent
from herald.gateway.delivery import Target
from herald.gateway.turns import WorkItem

if TYPE_CHECKING:
    from herald.gateway.runner import GatewayRunner
    from herald.state.gateway_tables import InflightTurn

log = logging.getLogger(__name__)

RESUME_TEXT = (
    "[Herald was restarted while working on the request above. Continue from where it "
    "stopped; check what was already done before repeating any action.]"
)
_SNIPPET = 60


def _snippet(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _SNIPPET else line[: _SNIPPET - 1] + "…"


def resume_notice(original: str) -> str:
    return (
        f"↻ Herald restarted while working on “{_snippet(original)}”; continuing where it stopped."
    )


def skipped_notice(original: str, *, looped: bool = True) -> str:
    why = "restarted several times in a short while, so it" if looped else "restarted and"
    return (
        f"Herald {why} did not continue “{_snippet(original)}” automatically. "
        "Send it again if you still need it."
    )


async def resume_turns(
    runner: GatewayRunner, rows: list[InflightTurn], *, allowed: bool, looped: bool = True
) -> int:
    """Resume (or, when not `allowed`, notify and forget) the interrupted turns `rows`,
    read before any platform connected. A session that has had a new turn since (its
    person wrote again while the gateway was starting) is not resumed: that turn runs
    on the same transcript, and resuming would take it for the cut one."""
    resumed = 0
    loop = asyncio.get_running_loop()
    for row in rows:
        if not runner.state.take_inflight(row):  # the continuation records its own mark
            log.info("not resuming %s: it has had a new message since", row.session_key)
            continue
        adapter = runner.adapters.get(row.platform)
        if adapter is None or not adapter.push_replies:
            log.info(
                "not resuming %s: %s is not a connected push platform",
                row.session_key,
                row.platform,
            )
            continue
        target = Target(row.platform, row.chat_id, row.thread_id)
        if not allowed:
            await runner.deliverer.deliver(adapter, target, skipped_notice(row.text, looped=looped))
            continue
        log.info(
            "resuming the interrupted turn of %s (session %s)", row.session_key, row.session_id
        )
        await runner.deliverer.deliver(adapter, target, resume_notice(row.text))
        event = MessageEvent(
            platform=row.platform,
            chat_id=row.chat_id,
            user_id=row.user_id or "",
            text=RESUME_TEXT,
            thread_id=row.thread_id,
        )
        item = WorkItem(
            event,
            adapter,
            RESUME_TEXT,
            f"resume:{uuid.uuid4().hex}",
            loop.create_future(),
            kind="resume",
        )
        runner.enqueue(runner.slot(row.session_key, row.profile), item)
        resumed += 1
    return resumed


__all__ = ["RESUME_TEXT", "resume_notice", "resume_turns", "skipped_notice"]
