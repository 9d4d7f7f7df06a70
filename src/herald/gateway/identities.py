"""Who is talking through the gateway, and what their role lets them do (issue 29).

Each event gets an identity before anything else happens to it: the one its entrance
authenticated (an API key's) or the one whose ``accounts`` list the sender's account
(`herald.config.identity_for_account`). The runner then asks this module whether the
identity may use a slash command, and builds the turn's agent with the identity's
tools only, so a guest's model is never offered a terminal, a file write, a cron job
or a sub-agent, whatever it asks for.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from herald.config.schema_identities import Identity, identity_for_account, identity_named
from herald.gateway.contracts import MessageEvent

if TYPE_CHECKING:
    from herald.config import HeraldConfig

log = logging.getLogger(__name__)

APPROVAL_COMMANDS = frozenset({"approve", "deny"})
# Commands that change how Herald runs for everyone: only the owner role uses them.
# (name, first word of the argument or None for the whole command)
ADMIN_COMMANDS = frozenset(
    {("model", None), ("compress", None), ("kanban", "approve"), ("agents", "stop")}
)


def identity_of(event: MessageEvent, config: HeraldConfig) -> Identity:
    if event.identity is not None:  # the entrance authenticated it (API keys)
        return identity_named(config.identities, event.identity)
    return identity_for_account(config.identities, event.platform, event.user_id)


def with_identity(event: MessageEvent, identity: Identity) -> MessageEvent:
    return event if event.identity == identity.name else replace(event, identity=identity.name)


def command_refusal(identity: Identity, name: str, arg: str) -> str | None:
    """Why `identity` may not run ``/name arg`` here, or None when it may."""
    if name in APPROVAL_COMMANDS and not identity.may_approve:
        return (
            f"⛔ Only an approver can answer approval requests, and {identity.name} "
            f"({identity.role}) is not one; nothing was approved or denied. The owner can "
            "answer it, or give you approve: true under identities in config.yaml."
        )
    first = arg.split(maxsplit=1)[0].lower() if arg.strip() else None
    if identity.is_owner:
        return None
    if (name, None) in ADMIN_COMMANDS:
        shown = f"/{name}"
    elif first is not None and (name, first) in ADMIN_COMMANDS:
        shown = f"/{name} {first}"
    else:
        return None
    return f"⛔ {shown} is for the owner only; {identity.name} is a {identity.role}."


def log_refusal(identity: Identity, event: MessageEvent, name: str) -> None:
    log.warning(
        "refused /%s from %s:%s (identity %s, role %s) in chat %s",
        name,
        event.platform,
        event.user_id,
        identity.name,
        identity.role,
        event.chat_id,
    )


__all__ = [
    "ADMIN_COMMANDS",
    "APPROVAL_COMMANDS",
    "command_refusal",
    "identity_of",
    "log_refusal",
    "with_identity",
]
