"""The small, pure steps of the gateway pipeline (the runner sequences them).

- `route`: the profile (routing.py) and the session key (session_keys.py);
- `reply_key`: the delivery-ledger key of the answer to an event;
- `compose_turn_text`: what the model is sent for an event (text plus media notes);
- `busy_action`: what a message does when its session is already running a turn;
- `inflight_record`: what is stored so a restart can resume the turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from typing import TYPE_CHECKING, Literal

from herald.config.schema_gateway import GatewayConfig
from herald.gateway.contracts import MessageEvent
from herald.gateway.routing import resolve_profile
from herald.gateway.session_keys import build_session_key, encode_part
from herald.state.gateway_tables import InflightTurn

if TYPE_CHECKING:
    from herald.gateway.turns import WorkItem

BusyAction = Literal["steer", "interrupt", "queue"]


def route(
    event: MessageEvent, config: GatewayConfig, default: str, served: Collection[str]
) -> tuple[str, str]:
    """(profile, session key) for `event`; UnservedProfileError for an unserved route."""
    section = getattr(config.platforms, event.platform, None)
    profile = resolve_profile(
        event,
        config.profile_routes,
        default=default,
        served=served,
        platform_default=getattr(section, "profile", None),
    )
    shared = bool(getattr(section, "shared_group_sessions", False))
    return profile, build_session_key(profile, event, shared_groups=shared)


def reply_key(event: MessageEvent) -> str:
    """Stable for a platform message (a redelivered update maps to the same reply);
    unique otherwise."""
    if event.message_id:
        parts = (event.platform, event.chat_id, event.message_id)
        return "reply:" + ":".join(encode_part(p) for p in parts)
    return f"turn:{uuid.uuid4().hex}"


def is_stable_key(key: str) -> bool:
    return key.startswith("reply:")


def compose_turn_text(event: MessageEvent) -> str:
    """The user's text, with a note of any attachments the platform described."""
    text = event.text.strip()
    if event.media:
        note = "[The user attached: " + "; ".join(event.media) + "]"
        text = f"{text}\n\n{note}" if text else note
    return text


def busy_action(mode: str, phase: str | None, *, push: bool) -> BusyAction:
    """What a new message does while its session is busy.

    `phase` is what the running turn is doing (None: between turns or a command, when
    the message simply runs next). A request/response caller needs an answer of its
    own, so for it `steer` queues. `interrupt` (the default) redirects a turn that is
    waiting on the model (the text is steered in; if the model answers without another
    tool call, the text runs as the next turn), and otherwise interrupts the turn and
    runs the new message next.
    """
    if phase is None or phase == "preparing":
        return "queue"
    if mode == "queue":
        return "queue"
    if not push:
        return "interrupt" if mode == "interrupt" else "queue"
    if mode == "steer":
        return "steer"
    return "steer" if phase == "model" else "interrupt"


def answers_running_turn(event: MessageEvent) -> bool:
    """Commands that only answer or stop a running turn (still taken while draining)."""
    from herald.engine.commands import parse_command

    parsed = parse_command(event.text)
    return parsed is not None and parsed[0] in ("approve", "deny", "stop")


def inflight_record(key: str, profile: str, session_id: str, item: WorkItem) -> InflightTurn:
    event = item.event
    return InflightTurn(
        session_key=key,
        profile=profile,
        session_id=session_id,
        platform=event.platform,
        chat_id=event.chat_id,
        thread_id=event.thread_id,
        user_id=event.user_id,
        message_id=event.message_id,
        text=item.text,
    )


__all__ = [
    "BusyAction",
    "answers_running_turn",
    "busy_action",
    "compose_turn_text",
    "inflight_record",
    "is_stable_key",
    "reply_key",
    "route",
]
