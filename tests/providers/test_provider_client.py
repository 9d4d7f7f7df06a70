"""ModelClient (rotation, fallback across two fake servers) and AuxiliaryClient."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from herald.config.home import HeraldHome
from herald.config.schema import HeraldConfig
from herald.config.secrets import MissingSecretError, Secrets
from herald.providers.auxiliary import AuxiliaryClient
from herald.providers.base import ProviderError
from herald.providers.client import ModelClient
from herald.providers.errors import FailoverReason, classify_error
from herald.providers.selection import Endpoint
from herald.testing.fake_llm import FakeLLMServer, Fault, Reply

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
KEY_1 = "sk-first-key-111111"
KEY_2 = "sk-second-key-222222"


@pytest.fixture(scope="module")
def second_module_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def backup(second_module_server: FakeLLMServer) -> FakeLLMServer:
    second_module_server.reset()
    return second_module_server


@pytest.fixture
def home(tmp_path: Path) -> HeraldHome:
    return HeraldHome(tmp_path / "home").ensure()


def make_config(server: FakeLLMServer, **model) -> HeraldConfig:
    data = {
        "model": {
            "provider": "openai",
            "name": "fake-model",
            "base_url": server.openai_base_url,
            "timeout": 5,
            **model,
        },
        "agent": {"retry_base_delay": 0.0, "retry_max_delay": 0.0},
    }
    return HeraldConfig.model_validate(data)


def sent_key(request) -> str:
    return request.headers.get("authorization", "").removeprefix("Bearer ")


def call(client: ModelClient):
    return client.call(client.build_request(MESSAGES, None))


def failing_call(client: ModelClient):
    with pytest.raises(ProviderError) as info:
        call(client)
    return classify_error(info.value)


def test_call_uses_config_settings(server, home):
    cfg = make_config(server, max_tokens=99, temperature=0.4, stream=False)
    client = ModelClient(cfg, Secrets(None, environ={"OPENAI_API_KEY": KEY_1}), home)
    server.enqueue(Reply.text("hello"))
    assert call(client).text == "hello"
    assert client.identity() == ("openai", "fake-model")
    settings = client.settings()
    assert (settings.max_tokens, settings.temperature, settings.timeout) == (99, 0.4, 5)
    body = server.model_requests()[0].body
    assert body["max_completion_tokens"] == 99 and body["temperature"] == 0.4
    assert server.model_requests()[0].stream is False  # model.stream: false
    assert sent_key(server.model_requests()[0]) == KEY_1
    client.close()


def test_rotate_credential_after_401_and_remember_it(server, home):
    cfg = make_config(server)
    keys = Secrets(None, environ={"OPENAI_API_KEY": KEY_1, "OPENAI_API_KEY_2": KEY_2})
    client = ModelClient(cfg, keys, home)
    server.enqueue(Fault.status(401), Reply.text("ok with key 2"))

    classified = failing_call(client)
    assert classified.reason == FailoverReason.AUTH_PERMANENT
    assert classified.should_rotate_credential
    assert client.rotate_credential(classified) is True
    assert call(client).text == "ok with key 2"
    assert [sent_key(r) for r in server.model_requests()] == [KEY_1, KEY_2]

    # No third key: rotation reports failure and says so.
    server.enqueue(Fault.status(429, retry_after=1))
    limited = failing_call(client)
    assert client.rotate_credential(limited) is False
    client.close()

    # A restart remembers that key 1 is dead.
    restarted = ModelClient(cfg, keys, home)
    server.reset()
    server.enqueue(Reply.text("fresh"))
    call(restarted)
    assert sent_key(server.model_requests()[0]) == KEY_2
    restarted.close()


def test_fall_back_to_another_server_and_api(server, backup, home):
    cfg = HeraldConfig.model_validate(
        {
            "model": {
                "provider": "openai",
                "name": "missing-model",
                "base_url": server.openai_base_url,
                "timeout": 5,
                "fallbacks": [
                    {
                        "provider": "openai",
                        "name": "missing-model",
                        "base_url": server.openai_base_url,
                    },  # same as main: skipped
                    {
                        "provider": "anthropic",
                        "name": "claude-backup",
                        "base_url": backup.anthropic_base_url,
                    },
                ],
            }
        }
    )
    secrets = Secrets(None, environ={"OPENAI_API_KEY": KEY_1, "ANTHROPIC_API_KEY": KEY_2})
    client = ModelClient(cfg, secrets, home)
    server.enqueue(Fault.status(404))
    backup.enqueue(Reply.text("from the backup"))

    classified = failing_call(client)
    assert classified.reason == FailoverReason.MODEL_NOT_FOUND
    assert client.rotate_credential(classified) is False  # not a key problem
    assert client.fall_back(classified) is True
    assert client.identity() == ("anthropic", "claude-backup")
    assert client.transport.api_mode == "anthropic_messages"

    assert call(client).text == "from the backup"  # request rebuilt for the new API
    assert len(server.model_requests()) == 1
    recorded = backup.model_requests()
    assert len(recorded) == 1 and recorded[0].api == "anthropic"
    assert recorded[0].model == "claude-backup"

    assert client.fall_back(classified) is False  # chain exhausted
    client.close()


def test_fall_back_skips_endpoints_without_a_usable_key(server, backup, home):
    cfg = HeraldConfig.model_validate(
        {
            "model": {
                "provider": "openai",
                "name": "fake-model",
                "base_url": server.openai_base_url,
                "fallbacks": [
                    {"provider": "anthropic", "base_url": backup.anthropic_base_url},
                    {
                        "provider": "custom",
                        "name": "local-llama",
                        "base_url": backup.openai_base_url,
                    },
                ],
            }
        }
    )
    client = ModelClient(cfg, Secrets(None, environ={"OPENAI_API_KEY": KEY_1}), home)
    server.enqueue(Fault.status(402))
    backup.enqueue(Reply.text("keyless server"))
    classified = failing_call(client)
    assert classified.reason == FailoverReason.BILLING
    assert client.rotate_credential(classified) is False
    assert client.fall_back(classified) is True
    assert client.endpoint.provider == "custom"  # anthropic skipped: no key
    assert call(client).text == "keyless server"
    assert KEY_1 not in str(backup.model_requests()[0].headers)  # no key leaks to it
    client.close()


def test_missing_key_is_reported_when_built(server, home):
    cfg = make_config(server)
    with pytest.raises(MissingSecretError) as info:
        ModelClient(cfg, Secrets(home.env_path, environ={}), home)
    message = str(info.value)
    assert "OPENAI_API_KEY" in message
    assert str(home.env_path) in message


def test_nothing_configured_selects_local_without_building_it(home):
    client = ModelClient(HeraldConfig(), Secrets(None, environ={}), home)
    assert client.auto_detected and client.local_auto_selected
    assert client.identity() == ("local", "smollm2-135m-instruct")


def test_from_explicit_chain(server):
    chain = [
        Endpoint(
            "custom",
            "chat_completions",
            "fake-model",
            server.openai_base_url,
            None,
            key_required=False,
        )
    ]
    client = ModelClient.from_chain(chain, Secrets(None, environ={}))
    server.enqueue(Reply.text("chained"))
    assert call(client).text == "chained"
    assert client.auto_detected is False
    client.close()


def test_success_clears_a_cooldown(server, home):
    cfg = make_config(server)
    client = ModelClient(cfg, Secrets(None, environ={"OPENAI_API_KEY": KEY_1}), home)
    server.enqueue(Fault.status(429), Reply.text("ok"))
    client.rotate_credential(failing_call(client))
    pool = client.pool()
    assert pool is not None and pool.status()[0].state == "exhausted"
    call(client)  # the only key is still tried, and now it works
    assert pool.status()[0].state == "ok"
    client.close()


# -- auxiliary ------------------------------------------------------------------------


def test_auxiliary_defaults_to_main_model_non_streaming(server, home):
    cfg = make_config(server)
    aux = AuxiliaryClient(cfg, Secrets(None, environ={"OPENAI_API_KEY": KEY_1}), home)
    server.enqueue(Reply.text("  A short title  "))
    assert aux.complete_text("Write a title.", "about cats") == "A short title"
    recorded = server.model_requests()[0]
    assert recorded.stream is False
    assert recorded.model == "fake-model"
    assert [m["role"] for m in recorded.messages] == ["system", "user"]
    aux.close()


def test_auxiliary_overrides_and_retries_transient_errors(server, home):
    cfg = make_config(server).model_copy(
        update={
            "auxiliary": HeraldConfig().auxiliary.model_copy(
                update={"name": "fake-model-mini", "max_tokens": 40}
            )
        }
    )
    aux = AuxiliaryClient(cfg, Secrets(None, environ={"OPENAI_API_KEY": KEY_1}), home)
    server.enqueue(Fault.status(500), Fault.empty_choices(), Reply.text("third time"))
    response = aux.complete([{"role": "user", "content": "summarize"}])
    assert response.text == "third time"
    recorded = server.model_requests()
    assert len(recorded) == 3
    assert recorded[0].model == "fake-model-mini"
    assert recorded[0].body["max_completion_tokens"] == 40

    server.reset()
    server.enqueue(Fault.status(503), Fault.status(503), Fault.status(503), Reply.text("late"))
    with pytest.raises(ProviderError):
        aux.complete_text("s", "u")
    assert len(server.model_requests()) == 3  # at most two retries
    aux.close()


def test_auxiliary_does_not_retry_permanent_errors(server, home):
    aux = AuxiliaryClient(
        make_config(server), Secrets(None, environ={"OPENAI_API_KEY": KEY_1}), home
    )
    server.enqueue(Fault.context_overflow(), Reply.text("unused"))
    with pytest.raises(ProviderError):
        aux.complete_text("s", "u")
    assert len(server.model_requests()) == 1
    aux.close()


def test_auxiliary_rotates_keys(server, home):
    keys = Secrets(None, environ={"OPENAI_API_KEY": KEY_1, "OPENAI_API_KEY_2": KEY_2})
    aux = AuxiliaryClient(make_config(server), keys, home)
    server.enqueue(Fault.status(401), Reply.text("second key works"))
    assert aux.complete_text("s", "u") == "second key works"
    assert [sent_key(r) for r in server.model_requests()] == [KEY_1, KEY_2]
    aux.close()
