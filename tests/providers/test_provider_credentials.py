"""The credential pool: order, cool-downs (fake clock), dead keys, persistence."""

from __future__ import annotations

import json
import logging

import pytest

from herald.config.schema import CredentialsConfig
from herald.providers.credentials import CredentialPool, fingerprint
from herald.providers.errors import FailoverReason as R

KEYS = ["sk-one-aaaaaaaa", "sk-two-bbbbbbbb", "sk-three-cccccc"]
COOLDOWNS = CredentialsConfig(rate_limit_cooldown=60, billing_cooldown=3600, auth_cooldown=300)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_pool(tmp_path, clock, keys=KEYS, provider="openai") -> CredentialPool:
    return CredentialPool(
        provider,
        keys,
        state_path=tmp_path / "cache" / "credentials.json",
        cooldowns=COOLDOWNS,
        clock=clock,
    )


def test_current_is_first_usable_in_order(tmp_path, clock):
    pool = make_pool(tmp_path, clock)
    assert pool.current() == KEYS[0]
    assert [s.state for s in pool.status()] == ["ok", "ok", "ok"]


def test_rotate_marks_current_and_returns_next(tmp_path, clock):
    pool = make_pool(tmp_path, clock)
    assert pool.rotate(R.RATE_LIMIT) == KEYS[1]
    assert pool.current() == KEYS[1]
    assert pool.rotate(R.BILLING) == KEYS[2]
    assert pool.rotate(R.AUTH) is None
    assert pool.current() is None
    states = [(s.state, s.reason) for s in pool.status()]
    assert states == [("exhausted", "rate_limit"), ("exhausted", "billing"), ("exhausted", "auth")]


def test_cooldowns_expire_by_error_class(tmp_path, clock):
    pool = make_pool(tmp_path, clock)
    pool.report_failure(KEYS[0], R.RATE_LIMIT)
    pool.report_failure(KEYS[1], R.AUTH)
    pool.report_failure(KEYS[2], R.BILLING)
    assert pool.current() is None
    clock.now += 61
    assert pool.current() == KEYS[0]  # rate limit: 60 s
    assert not pool.is_usable(KEYS[1])
    clock.now += 301 - 61
    assert pool.is_usable(KEYS[1])  # auth: 300 s
    assert not pool.is_usable(KEYS[2])
    clock.now += 3600
    assert pool.is_usable(KEYS[2])  # billing: an hour


def test_auth_permanent_is_dead_for_good(tmp_path, clock):
    pool = make_pool(tmp_path, clock)
    pool.report_failure(KEYS[0], R.AUTH_PERMANENT)
    clock.now += 10 * 365 * 86400
    assert pool.current() == KEYS[1]
    assert pool.status()[0].state == "dead"


def test_other_reasons_do_not_touch_keys(tmp_path, clock):
    pool = make_pool(tmp_path, clock)
    for reason in (R.SERVER_ERROR, R.TIMEOUT, R.CONTEXT_OVERFLOW, R.OVERLOADED):
        pool.report_failure(KEYS[0], reason)
    assert pool.current() == KEYS[0]


def test_success_clears_a_cooldown(tmp_path, clock):
    pool = make_pool(tmp_path, clock)
    pool.report_failure(KEYS[0], R.RATE_LIMIT)
    pool.report_success(KEYS[0])
    assert pool.current() == KEYS[0]
    assert make_pool(tmp_path, clock).current() == KEYS[0]


def test_state_persists_across_instances_without_the_key(tmp_path, clock):
    pool = make_pool(tmp_path, clock)
    pool.report_failure(KEYS[0], R.BILLING)
    pool.report_failure(KEYS[1], R.AUTH_PERMANENT)

    restarted = make_pool(tmp_path, clock)
    assert restarted.current() == KEYS[2]

    path = tmp_path / "cache" / "credentials.json"
    raw = path.read_text()
    for key in KEYS:
        assert key not in raw
    data = json.loads(raw)
    assert f"openai:{fingerprint(KEYS[0])}" in data["keys"]
    assert len(fingerprint(KEYS[0])) == 16
    assert (path.stat().st_mode & 0o777) == 0o600


def test_pools_of_different_providers_share_the_file(tmp_path, clock):
    openai_pool = make_pool(tmp_path, clock, keys=["sk-shared-key"], provider="openai")
    router_pool = make_pool(tmp_path, clock, keys=["sk-shared-key"], provider="openrouter")
    openai_pool.report_failure("sk-shared-key", R.RATE_LIMIT)
    router_pool.report_failure("sk-shared-key", R.BILLING)
    assert make_pool(tmp_path, clock, keys=["sk-shared-key"]).status()[0].reason == "rate_limit"
    again = make_pool(tmp_path, clock, keys=["sk-shared-key"], provider="openrouter")
    assert again.status()[0].reason == "billing"


@pytest.mark.parametrize("content", ["{not json", "[]", '{"keys": 5}', ""])
def test_corrupt_state_file_is_ignored_with_a_warning(tmp_path, clock, caplog, content):
    path = tmp_path / "cache" / "credentials.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with caplog.at_level(logging.WARNING, logger="herald.providers.credentials"):
        pool = make_pool(tmp_path, clock)
    assert pool.current() == KEYS[0]
    assert "credential state" in caplog.text
    pool.report_failure(KEYS[0], R.RATE_LIMIT)  # and it is rewritten cleanly
    assert make_pool(tmp_path, clock).current() == KEYS[1]


def test_pool_without_state_path_and_without_keys(clock):
    pool = CredentialPool("openai", [], state_path=None, clock=clock)
    assert pool.current() is None
    assert pool.rotate(R.RATE_LIMIT) is None
    memory_only = CredentialPool("openai", KEYS, state_path=None, clock=clock)
    assert memory_only.rotate(R.RATE_LIMIT) == KEYS[1]


def test_duplicate_keys_are_collapsed(tmp_path, clock):
    pool = make_pool(tmp_path, clock, keys=[KEYS[0], KEYS[0], "", KEYS[1]])
    assert pool.keys == [KEYS[0], KEYS[1]]


def test_best_effort_prefers_the_key_that_recovers_first(tmp_path, clock):
    pool = make_pool(tmp_path, clock)
    pool.report_failure(KEYS[0], R.AUTH_PERMANENT)
    pool.report_failure(KEYS[1], R.BILLING)
    pool.report_failure(KEYS[2], R.RATE_LIMIT)
    assert pool.current() is None
    assert pool.best_effort() == KEYS[2]
    pool.report_failure(KEYS[2], R.AUTH_PERMANENT)
    assert pool.best_effort() == KEYS[1]
    pool.report_failure(KEYS[1], R.AUTH_PERMANENT)
    assert pool.best_effort() == KEYS[0]  # all dead: still the first, never None
