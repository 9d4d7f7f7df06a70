"""Config `identities`: who shares Herald, their roles, and how an account finds its
identity (issue 29)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from herald.config import HeraldConfig
from herald.config.schema_identities import (
    IdentityConfig,
    guest_name,
    identity_for_account,
    identity_named,
)

FAMILY = {
    "owner": {"role": "owner", "accounts": ["telegram:12345", "cli:owner"]},
    "dana": {"role": "member", "accounts": ["telegram:67890"]},
}


def _identities(data: dict) -> dict[str, IdentityConfig]:
    return HeraldConfig.model_validate({"identities": data}).identities


def test_accounts_map_to_their_identity_and_role() -> None:
    identities = _identities(FAMILY)
    owner = identity_for_account(identities, "telegram", "12345")
    dana = identity_for_account(identities, "telegram", "67890")
    assert (owner.name, owner.role, owner.may_approve) == ("owner", "owner", True)
    assert (dana.name, dana.role, dana.may_approve) == ("dana", "member", False)
    # Jobs would run as the owner; skills reach everyone's prompt.
    assert set(dana.disabled_tools) == {"cronjob", "kanban", "skill_manage"}
    assert owner.disabled_tools == ()


def test_an_unlisted_account_is_a_guest_of_its_own() -> None:
    identities = _identities(FAMILY)
    one = identity_for_account(identities, "telegram", "555")
    two = identity_for_account(identities, "telegram", "556")
    assert one.role == two.role == "guest" and one.name != two.name
    assert not one.may_approve
    assert {"terminal", "write_file", "patch", "cronjob", "delegation"} <= set(one.disabled_tools)


def test_without_listed_accounts_everyone_let_in_is_the_owner_as_before() -> None:
    assert identity_for_account({}, "telegram", "555").name == "owner"
    assert identity_named({}, None).is_owner


def test_a_member_may_be_made_an_approver_but_a_guest_never() -> None:
    identities = _identities({"dana": {"role": "member", "approve": True}})
    assert identity_named(identities, "dana").may_approve
    with pytest.raises(ValidationError, match="guests never approve"):
        _identities({"kid": {"role": "guest", "approve": True}})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"owner": {"role": "member"}}, "must have role: owner"),
        ({"Dana": {}}, "lowercase"),
        ({"../x": {}}, "lowercase"),
        ({"guest-telegram-1": {}}, "paired guests"),
        ({"a": {"accounts": ["telegram:1"]}, "b": {"accounts": ["telegram:1"]}}, "both"),
        ({"a": {"accounts": ["12345"]}}, "<platform>:<user id>"),
    ],
)
def test_bad_identities_are_refused_with_the_reason(data: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _identities(data)


def test_guest_names_are_safe_folder_names() -> None:
    for user in ("555", "../../etc", "Ünïcode", "x" * 300):
        name = guest_name("telegram", user)
        assert name.startswith("guest-") and len(name) <= 64
        assert "/" not in name and ".." not in name
    assert guest_name("telegram", "a/b") != guest_name("telegram", "a_b")
