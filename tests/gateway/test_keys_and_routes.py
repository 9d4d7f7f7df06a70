"""Session keys (DM vs group per user vs shared group; hostile ids) and profile routes."""

from __future__ import annotations

from pathlib import Path

import pytest

from herald.config import MissingSecretError, Secrets
from herald.config.schema_gateway import GatewayConfig, ProfileRoute
from herald.gateway import resolve_secret_ref
from herald.gateway.contracts import MessageEvent
from herald.gateway.pipeline import route
from herald.gateway.routing import UnservedProfileError, resolve_profile
from herald.gateway.session_keys import (
    MAX_KEY,
    SessionKeyError,
    build_session_key,
    validate_session_key,
)


def _event(chat: str = "c1", user: str = "u1", **kw) -> MessageEvent:
    return MessageEvent(kw.pop("platform", "telegram"), chat, user, "hi", **kw)


def test_a_private_chat_is_one_session() -> None:
    key = build_session_key("default", _event())
    assert key == "agent:default:telegram:private:c1"


def test_a_group_has_a_session_per_member_unless_shared() -> None:
    alice = build_session_key("default", _event("g", "alice", chat_type="group"))
    bob = build_session_key("default", _event("g", "bob", chat_type="group"))
    assert alice != bob and alice.endswith(":user:alice")
    shared_a = build_session_key(
        "default", _event("g", "alice", chat_type="group"), shared_groups=True
    )
    shared_b = build_session_key(
        "default", _event("g", "bob", chat_type="group"), shared_groups=True
    )
    assert shared_a == shared_b == "agent:default:telegram:group:g"


def test_threads_and_profiles_and_hints_separate_sessions() -> None:
    plain = build_session_key("default", _event("g", chat_type="group"))
    thread = build_session_key("default", _event("g", chat_type="group", thread_id="7"))
    other_profile = build_session_key("work", _event("g", chat_type="group"))
    hint = build_session_key("default", _event(session_hint="alice-laptop"))
    assert len({plain, thread, other_profile, hint}) == 4
    assert hint == "agent:default:telegram:hint:alice-laptop"


def test_a_session_name_belongs_to_one_identity() -> None:
    owner = build_session_key("default", _event(platform="api", session_hint="shared"))
    dana = build_session_key(
        "default", _event(platform="api", session_hint="shared", identity="dana")
    )
    assert owner == "agent:default:api:hint:shared"  # the owner's names keep their key
    assert dana == "agent:default:api:as:dana:hint:shared"
    # No name the owner picks reaches dana's session, whatever it spells.
    for spelled in ("dana:hint:shared", "as:dana:hint:shared", "dana%3Ahint%3Ashared"):
        forged = build_session_key("default", _event(platform="api", session_hint=spelled))
        assert forged != dana


def test_a_shared_group_session_is_shared_per_identity() -> None:
    def key(user: str, identity: str | None) -> str:
        event = _event("g", user, chat_type="group", identity=identity)
        return build_session_key("default", event, shared_groups=True)

    assert key("alice", "owner") == key("alice-phone", "owner") == "agent:default:telegram:group:g"
    assert key("dana", "dana") == "agent:default:telegram:group:g:as:dana"
    assert key("dana", "dana") != key("kid", "guest-telegram-kid")


@pytest.mark.parametrize(
    "hostile",
    ["../../etc", "/etc/passwd", "..", ".", "a:b", "a/../../b", "x\x00y", "😀", " ", "~", "%41"],
)
def test_hostile_ids_never_make_a_path_or_a_separator(hostile: str, tmp_path: Path) -> None:
    key = build_session_key("default", _event(hostile, hostile, chat_type="group"))
    assert validate_session_key(key) == key
    assert "/" not in key and ".." not in key and "\x00" not in key
    assert key.count(":") == 6  # agent:default:telegram:group:<chat>:user:<user>
    resolved = (tmp_path / key).resolve()
    assert resolved.parent == tmp_path.resolve()


def test_distinct_ids_never_collide() -> None:
    ids = ["a:b", "a%3Ab", "a_b", "A:B", "a.b", "a%2Eb", "", "~", "x" * 200, "x" * 201]
    keys = {build_session_key("default", _event(i, chat_type="channel")) for i in ids}
    assert len(keys) == len(ids)


def test_huge_ids_are_hashed_to_a_bounded_key() -> None:
    key = build_session_key("default", _event("9" * 10_000, "8" * 10_000, chat_type="group"))
    assert len(key) <= MAX_KEY


@pytest.mark.parametrize(
    "bad", ["", "agent", "agent:../x:y:z:w", "other:a:b:c:d", "agent:a/b:c:d:e"]
)
def test_validation_rejects_unsafe_keys(bad: str) -> None:
    with pytest.raises(SessionKeyError):
        validate_session_key(bad)


# ---- profile routes ---------------------------------------------------------------------

ROUTES = [
    ProfileRoute(platform="telegram", profile="tg"),
    ProfileRoute(platform="telegram", guild="g1", profile="guild"),
    ProfileRoute(platform="telegram", chat="c1", profile="chat"),
    ProfileRoute(platform="telegram", chat="c1", thread="t1", profile="thread"),
    ProfileRoute(platform="telegram", chat="c2", profile="gone"),
]
SERVED = {"default", "tg", "guild", "chat", "thread", "hooks"}


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (_event("c1", guild_id="g1", thread_id="t1"), "thread"),
        (_event("c1", guild_id="g1", thread_id="t2"), "chat"),
        (_event("c9", guild_id="g1"), "guild"),
        (_event("c9"), "tg"),
        (_event("c9", platform="loopback"), "default"),
    ],
)
def test_the_most_specific_route_wins(event: MessageEvent, expected: str) -> None:
    assert resolve_profile(event, ROUTES, default="default", served=SERVED) == expected


def test_a_route_to_an_unserved_profile_is_an_error_not_the_default() -> None:
    with pytest.raises(UnservedProfileError, match=r"'gone'.*does not serve"):
        resolve_profile(_event("c2"), ROUTES, default="default", served=SERVED)


def test_a_platform_default_profile_sits_below_every_route() -> None:
    event = _event("any", platform="webhook")
    assert (
        resolve_profile(event, [], default="default", served=SERVED, platform_default="hooks")
        == "hooks"
    )
    routes = [ProfileRoute(platform="webhook", chat="any", profile="chat")]
    assert (
        resolve_profile(event, routes, default="default", served=SERVED, platform_default="hooks")
        == "chat"
    )


def test_route_uses_the_platforms_shared_group_setting() -> None:
    config = GatewayConfig.model_validate(
        {"platforms": {"telegram": {"shared_group_sessions": True}}}
    )
    profile, key = route(_event("g", "alice", chat_type="group"), config, "default", {"default"})
    assert profile == "default" and key == "agent:default:telegram:group:g"


async def test_an_unserved_route_is_told_to_the_chat(start_gateway, fake_llm) -> None:
    _runner, chat = await start_gateway(
        {"profile_routes": [{"platform": "loopback", "chat": "chat-1", "profile": "elsewhere"}]}
    )
    result = await chat.inject("hello")
    assert result.status == "error" and "'elsewhere'" in result.text
    assert chat.texts() == [result.text]
    assert fake_llm.model_requests() == []


async def test_a_routed_profile_answers_from_its_own_home(
    start_gateway, gateway_settings, tmp_path, fake_llm
) -> None:
    from herald.state import StateStore

    own = gateway_settings(
        {"profile_routes": [{"platform": "loopback", "chat": "work-chat", "profile": "work"}]}
    )
    work = gateway_settings(root=tmp_path / "home" / "profiles" / "work", profile="work")
    _runner, chat = await start_gateway(settings={"default": own, "work": work})
    routed = await chat.inject("for work", chat_id="work-chat")
    plain = await chat.inject("for me", chat_id="my-chat")
    with StateStore(work.home.state_db) as store:
        record = store.get_session(routed.session_id)
        assert record is not None and record.profile == "work"
    with StateStore(own.home.state_db) as store:
        assert store.get_session(routed.session_id) is None
        assert store.get_session(plain.session_id) is not None


# ---- ${VAR} references --------------------------------------------------------------------


def test_secret_references_resolve_through_the_accessor(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("BOT_TOKEN=123456:abcdef\n", encoding="utf-8")
    secrets = Secrets(env, environ={})
    assert resolve_secret_ref("${BOT_TOKEN}", secrets) == "123456:abcdef"
    assert resolve_secret_ref("Bearer ${BOT_TOKEN}", secrets) == "Bearer 123456:abcdef"
    assert resolve_secret_ref("literal", secrets) == "literal"
    assert resolve_secret_ref(None, secrets) is None and resolve_secret_ref("  ", secrets) is None
    with pytest.raises(
        MissingSecretError, match=r"gateway.platforms.telegram.token refers to \$\{NOPE\}"
    ):
        resolve_secret_ref("${NOPE}", secrets, setting="gateway.platforms.telegram.token")
