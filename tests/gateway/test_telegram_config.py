"""`create_adapter` for Telegram: the token setting, `${VAR}` references and clear errors."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("telegram")

from test_telegram_support import ALICE, RecordingSink

from herald.config import HeraldConfig, MissingSecretError, Secrets
from herald.gateway.platforms.telegram.adapter import (
    TOKEN_SETTING,
    TelegramAdapter,
    TelegramConfigError,
    TelegramConnectError,
    create_adapter,
)
from herald.testing.fake_telegram import FakeTelegramServer


@pytest.fixture
def server() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as fake:
        yield fake


def _config(token: str | None, base_url: str | None = None) -> HeraldConfig:
    telegram = {"enabled": True, "token": token, "base_url": base_url}
    return HeraldConfig.model_validate({"gateway": {"platforms": {"telegram": telegram}}})


def _secrets(tmp_path: Path, **values: str) -> Secrets:
    env = tmp_path / ".env"
    env.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    return Secrets(env, environ={})


async def test_the_token_reference_resolves_through_the_secrets(
    server: FakeTelegramServer, tmp_path: Path
) -> None:
    config = _config("${TELEGRAM_BOT_TOKEN}", server.base_url)
    adapter = create_adapter(config, _secrets(tmp_path, TELEGRAM_BOT_TOKEN=server.token))
    assert isinstance(adapter, TelegramAdapter) and adapter.name == "telegram"
    sink = RecordingSink()
    await adapter.connect(sink)
    try:
        server.send_user_message(ALICE, ALICE, "ping")
        [event] = await sink.wait_for(1)
    finally:
        await adapter.disconnect()
    assert event.text == "ping"


def test_the_lifecycle_may_pass_just_the_section(tmp_path: Path) -> None:
    section = _config("123456789:AAFakeTokenFakeTokenFakeToken").gateway.platforms.telegram
    adapter = create_adapter(section, _secrets(tmp_path), settings=None, home=None)
    assert isinstance(adapter, TelegramAdapter)


def test_a_missing_token_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(TelegramConfigError, match=TOKEN_SETTING):
        create_adapter(_config(None), _secrets(tmp_path))


def test_an_unset_reference_names_the_setting_and_the_variable(tmp_path: Path) -> None:
    with pytest.raises(MissingSecretError) as caught:
        create_adapter(_config("${TELEGRAM_BOT_TOKEN}"), _secrets(tmp_path))
    assert TOKEN_SETTING in str(caught.value) and "TELEGRAM_BOT_TOKEN" in str(caught.value)


def test_a_malformed_token_is_refused_without_echoing_it(tmp_path: Path) -> None:
    pasted = "sk-this-is-not-a-telegram-token-0123456789"
    with pytest.raises(TelegramConfigError) as caught:
        create_adapter(_config(pasted), _secrets(tmp_path))
    assert TOKEN_SETTING in str(caught.value) and pasted not in str(caught.value)


async def test_a_token_telegram_rejects_fails_connect_clearly(server: FakeTelegramServer) -> None:
    wrong = "987654321:AAWrongTokenWrongTokenWrongToken"
    adapter = TelegramAdapter(wrong, base_url=server.base_url)
    with pytest.raises(TelegramConnectError, match=TOKEN_SETTING) as caught:
        await adapter.connect(RecordingSink())
    assert wrong not in str(caught.value)  # python-telegram-bot's own message quotes it
    await adapter.disconnect()  # harmless after a failed connect


async def test_an_unreachable_server_fails_connect_clearly(server: FakeTelegramServer) -> None:
    base_url = server.base_url
    server.stop()
    adapter = TelegramAdapter(server.token, base_url=base_url)
    with pytest.raises(TelegramConnectError, match="cannot reach Telegram"):
        await adapter.connect(RecordingSink())


async def test_the_token_never_reaches_the_logs(
    server: FakeTelegramServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sink = RecordingSink()
    adapter = TelegramAdapter(server.token, base_url=server.base_url)
    await adapter.connect(sink)
    try:
        server.send_user_message(ALICE, ALICE, "ping")
        await sink.wait_for(1)
        await adapter.send(str(ALICE), "pong")
    finally:
        await adapter.disconnect()
    logged = "\n".join(caplog.messages)
    assert "sendMessage" in logged  # the request lines are there…
    assert server.token not in logged  # …without the token in their URLs
