"""Authorization: who may talk to Herald through the gateway.

A platform whose config section has ``allowed_users`` is checked against it (user
ids, ``@names`` or ``*``), plus ``gateway.allowed_users[<platform>]`` and the users
approved by pairing. A platform with a config section but no allowlist (the API,
webhooks) authenticates its callers itself, so its events are authorized here. A
platform with no config section at all (the loopback test platform, a plugin) uses
``gateway.allowed_users`` and pairing only.

An unknown user in a private chat gets a pairing code (again only after a while, if
they keep writing); everyone else is ignored and logged, at most once per
``ignored_log_interval`` per user so a noisy group cannot flood the log.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from herald.config.schema_gateway import GatewayConfig
from herald.gateway.contracts import MessageEvent
from herald.gateway.pairing import PairingStore

log = logging.getLogger(__name__)

REMIND_AFTER_SECONDS = 600.0
_MAX_TRACKED = 10_000


@dataclass(frozen=True)
class AuthDecision:
    status: Literal["allowed", "pairing", "ignored"]
    text: str = ""

    @property
    def allowed(self) -> bool:
        return self.status == "allowed"


def allowlist_matches(entries: Iterable[str], event: MessageEvent) -> bool:
    name = (event.user_name or "").lstrip("@").lower()
    for entry in entries:
        entry = str(entry).strip()
        if entry == "*" or entry == event.user_id:
            return True
        if entry.startswith("@") and name and entry[1:].lower() == name:
            return True
    return False


def pairing_notice(code: str, ttl: float) -> str:
    return (
        "Hi! I don't know you yet, so I can't answer. If you know the owner of this bot, "
        f"send them this code; they can let you in with:\n\n  herald pairing approve {code}\n\n"
        f"The code expires in {max(1, round(ttl / 60))} minutes."
    )


class IgnoredLog:
    """Logs an ignored user at most once per `interval` (with how many were skipped)."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic):
        self.interval = interval
        self.clock = clock
        self._seen: OrderedDict[tuple[str, str], tuple[float, int]] = OrderedDict()

    def record(self, event: MessageEvent, why: str) -> bool:
        """True when this one was written to the log."""
        key = (event.platform, event.user_id)
        now = self.clock()
        last, skipped = self._seen.get(key, (None, 0))
        if last is not None and now - last < self.interval:
            self._seen[key] = (last, skipped + 1)
            return False
        more = f" ({skipped} more ignored since the last note)" if skipped else ""
        log.warning(
            "ignored a message from %s user %s%s in %s chat %s: %s%s",
            event.platform,
            event.user_id,
            f" (@{event.user_name})" if event.user_name else "",
            event.chat_type,
            event.chat_id,
            why,
            more,
        )
        self._seen[key] = (now, 0)
        self._seen.move_to_end(key)
        while len(self._seen) > _MAX_TRACKED:
            self._seen.popitem(last=False)
        return True


class Authorizer:
    def __init__(
        self,
        config: GatewayConfig,
        pairing: PairingStore,
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.config = config
        self.pairing = pairing
        self.ignored = IgnoredLog(config.ignored_log_interval, clock)

    def self_authenticating(self, platform: str) -> bool:
        section = getattr(self.config.platforms, platform, None)
        return section is not None and not hasattr(section, "allowed_users")

    def allowlist(self, platform: str) -> list[str]:
        section = getattr(self.config.platforms, platform, None)
        own = list(getattr(section, "allowed_users", None) or [])
        return own + list(self.config.allowed_users.get(platform, []))

    def check(self, event: MessageEvent) -> AuthDecision:
        if self.self_authenticating(event.platform):
            return AuthDecision("allowed")
        if allowlist_matches(self.allowlist(event.platform), event):
            return AuthDecision("allowed")
        if self.pairing.is_approved(event.platform, event.user_id):
            return AuthDecision("allowed")
        if event.chat_type != "private":
            self.ignored.record(event, "not an allowed user")
            return AuthDecision("ignored")
        request, tell = self.pairing.request(
            event.platform,
            event.user_id,
            event.user_name,
            event.chat_id,
            remind_after=REMIND_AFTER_SECONDS,
        )
        if request is None:
            self.ignored.record(event, "unknown user, and too many pairing codes are pending")
            return AuthDecision("ignored")
        if not tell:
            self.ignored.record(event, f"unknown user, pairing code {request.code} pending")
            return AuthDecision("ignored")
        log.warning(
            "unknown %s user %s%s asked to pair: code %s (approve with `herald pairing approve`)",
            event.platform,
            event.user_id,
            f" (@{event.user_name})" if event.user_name else "",
            request.code,
        )
        return AuthDecision("pairing", pairing_notice(request.code, self.pairing.ttl))


__all__ = ["AuthDecision", "Authorizer", "IgnoredLog", "allowlist_matches", "pairing_notice"]
