"""Authorization: allowlists, the pairing flow (with `herald pairing approve`), and
rate-limited logging of ignored users."""

from __future__ import annotations

import logging

import pytest

from herald.cli.pairing_cmd import approve_code, pairing_store
from herald.config.schema_gateway import GatewayConfig
from herald.gateway.auth import Authorizer, IgnoredLog, allowlist_matches
from herald.gateway.contracts import MessageEvent
from herald.gateway.pairing import CODE_ALPHABET, CODE_LENGTH, PairingError, PairingStore


def _event(user: str = "u1", *, name: str | None = None, chat_type: str = "private",
           platform: str = "telegram") -> MessageEvent:  # fmt: skip
    return MessageEvent(platform, f"chat-{user}", user, "hi", chat_type=chat_type, user_name=name)  # type: ignore[arg-type]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("entries", "user", "name", "allowed"),
    [
        (["42"], "42", None, True),
        (["42"], "43", None, False),
        (["@Alice"], "7", "alice", True),
        (["@alice"], "7", "@ALICE", True),
        (["alice"], "7", "alice", False),  # names need the @
        (["*"], "anyone", None, True),
        ([], "42", None, False),
    ],
)
def test_allowlist_matching(entries: list[str], user: str, name: str | None, allowed: bool) -> None:
    assert allowlist_matches(entries, _event(user, name=name)) is allowed


def _authorizer(tmp_path, **gateway) -> Authorizer:
    config = GatewayConfig.model_validate(gateway)
    return Authorizer(config, PairingStore(tmp_path / "pairing.json", ttl=600))


def test_platforms_that_authenticate_themselves_are_trusted(tmp_path) -> None:
    auth = _authorizer(tmp_path)
    assert auth.check(_event(platform="api")).allowed
    assert auth.check(_event(platform="webhook")).allowed
    assert not auth.check(_event(platform="telegram", chat_type="group")).allowed


def test_the_platform_allowlist_and_the_extra_allowlist_both_count(tmp_path) -> None:
    auth = _authorizer(
        tmp_path,
        platforms={"telegram": {"allowed_users": ["1"]}},
        allowed_users={"telegram": ["2"], "loopback": ["3"]},
    )
    assert auth.check(_event("1", chat_type="group")).allowed
    assert auth.check(_event("2", chat_type="group")).allowed
    assert auth.check(_event("3", chat_type="group", platform="loopback")).allowed
    assert auth.check(_event("4", chat_type="group")).status == "ignored"


def test_a_stranger_in_a_group_is_ignored_and_logged_rate_limited(tmp_path, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="herald.gateway.auth")
    auth = _authorizer(tmp_path)
    for _ in range(5):
        assert auth.check(_event("x", chat_type="group")).status == "ignored"
    notes = [r for r in caplog.records if "ignored a message" in r.getMessage()]
    assert len(notes) == 1
    assert not (tmp_path / "pairing.json").exists()  # no pairing in groups


def test_ignored_log_notes_again_after_the_interval_with_a_count(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="herald.gateway.auth")
    clock = Clock()
    log = IgnoredLog(60, clock)
    event = _event("x", chat_type="group")
    assert log.record(event, "why")
    assert not log.record(event, "why")
    assert not log.record(event, "why")
    clock.now += 61
    assert log.record(event, "why")
    assert "2 more ignored" in caplog.records[-1].getMessage()


def test_pairing_codes_are_one_time_and_expire(tmp_path) -> None:
    clock = Clock()
    store = PairingStore(tmp_path / "pairing.json", ttl=60, clock=clock)
    request, tell = store.request("telegram", "9", "bob", "chat-9", remind_after=600)
    assert tell and request is not None
    assert len(request.code) == CODE_LENGTH and set(request.code) <= set(CODE_ALPHABET)
    again, tell_again = store.request("telegram", "9", "bob", "chat-9", remind_after=600)
    assert again is not None and again.code == request.code and not tell_again
    clock.now += 61
    with pytest.raises(PairingError, match="no pending pairing code"):
        store.approve(request.code)
    fresh, tell_fresh = store.request("telegram", "9", "bob", "chat-9", remind_after=600)
    assert fresh is not None and tell_fresh and fresh.code != request.code
    user = store.approve(fresh.code.lower())
    assert user.label == "telegram:9 (@bob)"
    with pytest.raises(PairingError):
        store.approve(fresh.code)  # one time
    assert store.is_approved("telegram", "9")
    assert [u.user_id for u in store.revoke("@bob")] == ["9"]
    assert not store.is_approved("telegram", "9")


def test_a_corrupt_pairing_file_is_ignored(tmp_path) -> None:
    path = tmp_path / "pairing.json"
    path.write_text("{not json", encoding="utf-8")
    store = PairingStore(path, ttl=60)
    assert store.pending() == [] and not store.is_approved("telegram", "1")
    request, _ = store.request("telegram", "1", None, "c", remind_after=600)
    assert request is not None and store.pending()


async def test_pairing_end_to_end_through_the_gateway(start_gateway, fake_llm) -> None:
    runner, chat = await start_gateway()
    first = await chat.inject("hello?", user_id="stranger", chat_id="dm-stranger", user_name="eve")
    assert first.status == "pairing"
    code = next(word for word in first.text.split() if len(word) == CODE_LENGTH and word.isupper())
    assert f"herald pairing approve {code}" in first.text
    assert chat.texts("dm-stranger") == [first.text]
    # writing again right away is ignored (no second code, no model call)
    assert (
        await chat.inject("hello??", user_id="stranger", chat_id="dm-stranger")
    ).status == "ignored"
    assert fake_llm.model_requests() == []
    # the owner approves it with the function `herald pairing approve CODE` calls
    user = approve_code(runner.settings, code)
    assert user.user_id == "stranger"
    answered = await chat.inject("now?", user_id="stranger", chat_id="dm-stranger")
    assert answered.status == "replied"
    assert [u.user_id for u in pairing_store(runner.settings).approved()] == ["stranger"]


def test_pairing_cli_commands(tmp_path, gateway_settings, monkeypatch) -> None:
    from typer.testing import CliRunner

    import herald.cli.pairing_cmd as pairing_cmd

    settings = gateway_settings()
    monkeypatch.setenv("HERALD_HOME", str(settings.home.root))
    store = pairing_store(settings)
    request, _ = store.request("loopback", "77", "zed", "dm-77", remind_after=600)
    assert request is not None
    cli = CliRunner()
    listed = cli.invoke(pairing_cmd.app, ["list"], obj={})
    assert listed.exit_code == 0, listed.output
    assert request.code in listed.output and "loopback:77" in listed.output
    bad = cli.invoke(pairing_cmd.app, ["approve", "NOPE2345"], obj={})
    assert bad.exit_code != 0
    ok = cli.invoke(pairing_cmd.app, ["approve", request.code], obj={})
    assert ok.exit_code == 0 and "approved loopback:77 (@zed)" in ok.output
    revoked = cli.invoke(pairing_cmd.app, ["revoke", "loopback:77"], obj={})
    assert revoked.exit_code == 0 and "revoked loopback:77" in revoked.output
