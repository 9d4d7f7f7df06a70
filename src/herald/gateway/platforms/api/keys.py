"""The API's callers: which bearer key talks as which identity, with which scopes.

``gateway.platforms.api.api_key`` is the owner's key with ``chat`` and
``sessions:own`` (as before identities existed, minus other entrances' sessions);
``gateway.platforms.api.keys`` adds callers, each ``{name, key, identity, scopes}``:

- ``chat``: run turns (chat completions, posting to its own API sessions);
- ``sessions:own``: list and read the API sessions of its own identity;
- ``sessions:all``: list and read every session, of every identity and entrance.

`served_keys` is the one function that resolves them, so whatever judges the
strength of served secrets can check every value (with the setting it came from).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.config import ConfigError
from herald.config.schema_identities import OWNER
from herald.gateway.served.server import resolve_secret, secret_equals

if TYPE_CHECKING:
    from herald.config import Secrets

CHAT = "chat"
SESSIONS_OWN = "sessions:own"
SESSIONS_ALL = "sessions:all"
OWNER_SCOPES = frozenset({CHAT, SESSIONS_OWN})


@dataclass(frozen=True)
class ApiCaller:
    """Who a request is from, once its key matched. Never holds the key itself."""

    name: str
    identity: str
    scopes: frozenset[str]

    def may(self, scope: str) -> bool:
        return scope in self.scopes

    @property
    def sees_every_session(self) -> bool:
        return SESSIONS_ALL in self.scopes

    @property
    def reads_sessions(self) -> bool:
        return bool(self.scopes & {SESSIONS_OWN, SESSIONS_ALL})


@dataclass(frozen=True)
class ServedKey:
    setting: str  # where it was configured, for error messages and strength checks
    secret: str
    caller: ApiCaller


class KeyRing:
    """The configured keys; `caller_for` compares the token with every key in constant
    time (no early exit), so timing tells nothing about which key came close."""

    def __init__(self, keys: Iterable[ServedKey]) -> None:
        self.keys = tuple(keys)
        if not self.keys:
            raise ConfigError("the API needs at least one key")
        secrets = [k.secret for k in self.keys]
        if len(set(secrets)) != len(secrets):
            raise ConfigError(
                "two API keys have the same value; each caller needs a key of its own"
            )
        names = [k.caller.name for k in self.keys]
        if len(set(names)) != len(names):
            raise ConfigError("two API keys have the same name; name each caller once")

    def caller_for(self, token: str | None) -> ApiCaller | None:
        found: ApiCaller | None = None
        for key in self.keys:
            if secret_equals(token, key.secret) and found is None:
                found = key.caller
        return found

    def secrets(self) -> tuple[str, ...]:
        return tuple(k.secret for k in self.keys)


def owner_key(secret: str) -> ServedKey:
    return ServedKey(
        "gateway.platforms.api.api_key", secret, ApiCaller("api_key", OWNER, OWNER_SCOPES)
    )


def served_keys(settings: Any, secrets: Secrets, identities: Iterable[str] = ()) -> list[ServedKey]:
    """Every key of ``gateway.platforms.api`` (`settings`), resolved through the secrets
    accessor, each with the setting it came from. `identities` are the configured
    identity names (``owner`` always exists); a key naming another identity is refused,
    so a typo never makes a caller nobody."""
    known = {OWNER, *identities}
    out: list[ServedKey] = []
    if settings.api_key:
        value = resolve_secret(settings.api_key, secrets, setting="gateway.platforms.api.api_key")
        if value:
            out.append(owner_key(value))
    for index, entry in enumerate(settings.keys):
        setting = f"gateway.platforms.api.keys[{index}].key"
        value = resolve_secret(entry.key, secrets, setting=setting)
        if not value:
            raise ConfigError(f"{setting} ({entry.name}) is empty")
        if entry.identity not in known:
            raise ConfigError(
                f"gateway.platforms.api.keys[{index}] ({entry.name}) talks as identity "
                f"{entry.identity!r}, which is not under `identities:`; add it there "
                f"(known: {', '.join(sorted(known))})"
            )
        caller = ApiCaller(entry.name, entry.identity, frozenset(entry.scopes))
        out.append(ServedKey(setting, value, caller))
    return out


__all__ = [
    "CHAT",
    "SESSIONS_ALL",
    "SESSIONS_OWN",
    "ApiCaller",
    "KeyRing",
    "ServedKey",
    "owner_key",
    "served_keys",
]
