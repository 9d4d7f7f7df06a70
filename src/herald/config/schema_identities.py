"""Config section `identities`: the people who share one Herald, and what each may do.

```yaml
identities:
  owner: {role: owner, accounts: ["telegram:12345", "cli:owner", "web:owner"]}
  dana: {role: member, accounts: ["telegram:67890"]}
```

Every turn belongs to one identity (DESIGN invariant 19). The identity named
``owner`` always exists, with role ``owner``, even when the section is empty: before
identities existed everything was the owner's, so an existing home keeps working.
An account is ``<platform>:<user id>``; an account no identity lists goes through
pairing and, once approved, talks as a guest.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator

from herald.config.strict import StrictModel

OWNER = "owner"
GUEST = "guest"
Role = Literal["owner", "member", "guest"]
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


# What a role is not offered unless its identity says otherwise (`disabled_tools`):
# a guest gets no way to run commands, write files, schedule jobs, start sub-agents or
# change what Herald remembers and knows (memory, skills, the board).
ROLE_DISABLED_TOOLS: dict[str, tuple[str, ...]] = {
    "owner": (),
    # Scheduled jobs and board tasks run later, unattended, as the owner (they carry no
    # identity yet), so a member's job would work with the owner's memory and history;
    # skills are shared by everyone, so what a member writes there reaches every prompt.
    "member": ("cronjob", "kanban", "skill_manage"),
    "guest": (
        "terminal",
        "write_file",
        "patch",
        "cronjob",
        "delegation",
        "memory",
        "skill_manage",
        "kanban",
    ),
}


# What a guest may be offered at most (their surface may offer less): reading and
# searching, never anything that writes, runs or reaches further (MCP servers' and
# plugins' tools included, since no list could name them in advance).
GUEST_TOOLS: tuple[str, ...] = (
    "todo",
    "clarify",
    "session_search",
    "skills_list",
    "skill_view",
    "read_file",
    "search_files",
    "web_search",
    "web_extract",
)


class IdentityConfig(StrictModel):
    role: Role = "member"
    accounts: list[str] = Field(
        default_factory=list, description="platform accounts, e.g. telegram:12345"
    )
    approve: bool | None = Field(
        None, description="may answer approval requests; unset = only the owner role"
    )
    disabled_tools: list[str] | None = Field(
        None, description="toolsets or tools this identity is not offered; unset = its role's"
    )

    @field_validator("accounts")
    @classmethod
    def _accounts_have_a_platform(cls, accounts: list[str]) -> list[str]:
        for account in accounts:
            platform, sep, user = account.partition(":")
            if not sep or not platform.strip() or not user.strip():
                raise ValueError(
                    f"account {account!r} must be <platform>:<user id>, e.g. telegram:12345"
                )
        return accounts


def check_identities(identities: dict[str, IdentityConfig]) -> dict[str, IdentityConfig]:
    """Names are short lowercase words (they become folder names under memories/users/);
    ``owner`` is the owner; one account belongs to one identity only."""
    seen: dict[str, str] = {}
    for name, identity in identities.items():
        if not _NAME.match(name):
            raise ValueError(
                f"identity name {name!r} must be lowercase letters, digits, '-' or '_' "
                "(at most 64, starting with a letter or digit)"
            )
        if name.startswith(GUEST + "-"):
            raise ValueError(
                f"identity name {name!r}: names starting 'guest-' are for paired guests"
            )
        if name == OWNER and identity.role != "owner":
            raise ValueError("the identity 'owner' must have role: owner")
        if identity.role == "guest" and identity.approve:
            raise ValueError(f"identity {name!r} is a guest, and guests never approve")
        for account in identity.accounts:
            if account in seen:
                raise ValueError(
                    f"account {account!r} is listed under both {seen[account]!r} and {name!r}"
                )
            seen[account] = name
    return identities


@dataclass(frozen=True)
class Identity:
    """Who a turn is for, as every surface and store read sees it."""

    name: str
    role: Role
    may_approve: bool
    disabled_tools: tuple[str, ...]
    only_tools: tuple[str, ...] | None = None  # at most these (guests); None: no cap

    @property
    def is_owner(self) -> bool:
        return self.role == "owner"


def _identity(name: str, config: IdentityConfig) -> Identity:
    approve = config.approve if config.approve is not None else config.role == "owner"
    disabled = (
        tuple(config.disabled_tools)
        if config.disabled_tools is not None
        else ROLE_DISABLED_TOOLS[config.role]
    )
    only = GUEST_TOOLS if config.role == "guest" else None
    return Identity(name, config.role, approve and config.role != "guest", disabled, only)


def identity_named(identities: dict[str, IdentityConfig], name: str | None) -> Identity:
    """The configured identity `name` (the owner when None); a name nobody configured
    (a paired account's) is a guest."""
    name = name or OWNER
    if name in identities:
        return _identity(name, identities[name])
    if name == OWNER:
        return _identity(OWNER, IdentityConfig(role="owner"))
    return _identity(name, IdentityConfig(role="guest"))


def identity_for_account(
    identities: dict[str, IdentityConfig], platform: str, user_id: str
) -> Identity:
    """The identity whose ``accounts`` list ``<platform>:<user_id>``. Until some
    identity lists an account, everyone the gateway lets in is the owner, as before
    identities existed; after that, an account nobody lists is a guest of its own."""
    account = f"{platform}:{user_id}"
    listed = False
    for name, config in identities.items():
        if account in config.accounts:
            return _identity(name, config)
        listed = listed or bool(config.accounts)
    if not listed:
        return identity_named(identities, OWNER)
    return identity_named(identities, guest_name(platform, user_id))


def guest_name(platform: str, user_id: str) -> str:
    """A guest's own name (so two guests never share a memory): the account, folded
    into the identity-name alphabet, with a digest when folding lost anything."""
    raw = f"{platform}-{user_id}".lower()
    folded = re.sub(r"[^a-z0-9_-]", "_", raw)
    if folded != raw or len(folded) > 50:
        folded = folded[:40] + "-" + hashlib.sha256(raw.encode()).hexdigest()[:10]
    return f"{GUEST}-{folded}"


__all__ = [
    "GUEST",
    "GUEST_TOOLS",
    "OWNER",
    "ROLE_DISABLED_TOOLS",
    "Identity",
    "IdentityConfig",
    "Role",
    "check_identities",
    "guest_name",
    "identity_for_account",
    "identity_named",
]
