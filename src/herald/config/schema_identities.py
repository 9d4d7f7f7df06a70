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

import re
from typing import Literal

from pydantic import Field, field_validator

from herald.config.strict import StrictModel

OWNER = "owner"
GUEST = "guest"
Role = Literal["owner", "member", "guest"]
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class IdentityConfig(StrictModel):
    role: Role = "member"
    accounts: list[str] = Field(
        default_factory=list, description="platform accounts, e.g. telegram:12345"
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
        if name == OWNER and identity.role != "owner":
            raise ValueError("the identity 'owner' must have role: owner")
        for account in identity.accounts:
            if account in seen:
                raise ValueError(
                    f"account {account!r} is listed under both {seen[account]!r} and {name!r}"
                )
            seen[account] = name
    return identities


__all__ = ["GUEST", "OWNER", "IdentityConfig", "Role", "check_identities"]
