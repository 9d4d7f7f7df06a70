"""Endpoint resolution: provider defaults, auto-detection, chains, auxiliary, errors."""

from __future__ import annotations

import pytest

from herald.config.schema import HeraldConfig
from herald.config.secrets import Secrets
from herald.providers.anthropic_messages import AnthropicMessagesTransport
from herald.providers.openai_chat import OpenAIChatTransport
from herald.providers.selection import (
    Endpoint,
    ProviderConfigError,
    create_transport,
    detect_provider,
    resolve_auxiliary,
    resolve_chain,
    resolve_endpoint,
    resolve_selection,
)


def secrets(**env: str) -> Secrets:
    return Secrets(None, environ=env)


def config(**data) -> HeraldConfig:
    return HeraldConfig.model_validate(data)


@pytest.mark.parametrize(
    ("env", "provider"),
    [
        ({"OPENAI_API_KEY": "a", "ANTHROPIC_API_KEY": "b", "OPENROUTER_API_KEY": "c"}, "openai"),
        ({"ANTHROPIC_API_KEY": "b", "OPENROUTER_API_KEY": "c"}, "anthropic"),
        ({"OPENROUTER_API_KEY": "c"}, "openrouter"),
        ({"OPENAI_API_KEY_2": "only-the-second"}, "openai"),
        ({}, "local"),
    ],
)
def test_auto_detection_order(env, provider):
    assert detect_provider(secrets(**env)) == provider
    selection = resolve_selection(config(), secrets(**env))
    assert selection.endpoint.provider == provider
    assert selection.auto_detected is True
    assert selection.local_auto_selected is (provider == "local")


def test_local_auto_selection_uses_the_small_model():
    endpoint = resolve_endpoint(config().model, secrets())
    assert endpoint == Endpoint(
        "local", "local", "smollm2-135m-instruct", None, None, key_required=False
    )


@pytest.mark.parametrize(
    ("provider", "api_mode", "base_url", "key_env"),
    [
        ("openai", "chat_completions", "https://api.openai.com/v1", "OPENAI_API_KEY"),
        ("anthropic", "anthropic_messages", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
        ("openrouter", "chat_completions", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    ],
)
def test_provider_defaults(provider, api_mode, base_url, key_env):
    endpoint = resolve_endpoint(config(model={"provider": provider}).model, secrets())
    assert endpoint.api_mode == api_mode
    assert endpoint.base_url == base_url
    assert endpoint.key_env == key_env
    assert endpoint.model  # a default model name
    assert endpoint.key_required
    explicit = resolve_selection(config(model={"provider": provider}), secrets())
    assert explicit.auto_detected is False


def test_explicit_settings_override_defaults():
    cfg = config(
        model={
            "provider": "openai",
            "name": "gpt-test",
            "base_url": "http://127.0.0.1:1/v1/",
            "api_key_env": "MY_KEY",
        }
    )
    endpoint = resolve_endpoint(cfg.model, secrets())
    assert (endpoint.model, endpoint.base_url, endpoint.key_env) == (
        "gpt-test",
        "http://127.0.0.1:1/v1",
        "MY_KEY",
    )


def test_custom_requires_base_url_with_a_clear_message():
    with pytest.raises(ProviderConfigError) as info:
        resolve_endpoint(config(model={"provider": "custom", "name": "llama"}).model, secrets())
    assert "model.base_url" in str(info.value)


def test_custom_without_key_needs_none_and_with_key_env_requires_it():
    keyless = resolve_endpoint(
        config(model={"provider": "custom", "name": "llama", "base_url": "http://h:1/v1"}).model,
        secrets(),
    )
    assert keyless.key_env is None and not keyless.key_required
    keyed = resolve_endpoint(
        config(
            model={
                "provider": "custom",
                "name": "m",
                "base_url": "http://h/v1",
                "api_key_env": "VLLM_KEY",
            }
        ).model,
        secrets(),
    )
    assert keyed.key_env == "VLLM_KEY" and keyed.key_required


def test_custom_requires_a_model_name():
    with pytest.raises(ProviderConfigError, match=r"model\.name"):
        resolve_endpoint(
            config(model={"provider": "custom", "base_url": "http://h/v1"}).model, secrets()
        )


def test_unset_provider_with_base_url_means_custom():
    selection = resolve_selection(
        config(model={"name": "qwen", "base_url": "http://localhost:11434/v1"}),
        secrets(OPENAI_API_KEY="sk"),
    )
    assert selection.endpoint.provider == "custom"
    assert selection.auto_detected is False


def test_chain_skips_repeats_and_names_bad_fallbacks():
    cfg = config(
        model={
            "provider": "openai",
            "name": "gpt-a",
            "fallbacks": [
                {"provider": "openai", "name": "gpt-a"},  # same as main: skipped
                {"provider": "anthropic"},
                {"provider": "anthropic"},  # repeat: skipped
                {"provider": "local"},
            ],
        }
    )
    chain = resolve_chain(cfg, secrets())
    assert [(e.provider, e.model) for e in chain] == [
        ("openai", "gpt-a"),
        ("anthropic", chain[1].model),
        ("local", "smollm2-135m-instruct"),
    ]
    bad = config(model={"provider": "openai", "fallbacks": [{"provider": "custom"}]})
    with pytest.raises(ProviderConfigError, match=r"model.fallbacks\[0\].*base_url"):
        resolve_chain(bad, secrets())


def test_auxiliary_inherits_model_and_overrides_per_key():
    cfg = config(model={"provider": "openai", "name": "gpt-main", "base_url": "http://x/v1"})
    aux = resolve_auxiliary(cfg, secrets())
    assert (aux.provider, aux.model, aux.base_url) == ("openai", "gpt-main", "http://x/v1")

    cfg = config(model={"provider": "openai", "name": "gpt-main"}, auxiliary={"name": "gpt-small"})
    assert resolve_auxiliary(cfg, secrets()).model == "gpt-small"

    # another provider does not inherit the main model's name or URL
    cfg = config(
        model={"provider": "openai", "name": "gpt-main", "base_url": "http://x/v1"},
        auxiliary={"provider": "anthropic"},
    )
    aux = resolve_auxiliary(cfg, secrets())
    assert aux.provider == "anthropic"
    assert aux.base_url == "https://api.anthropic.com"
    assert aux.model != "gpt-main"


def test_auxiliary_follows_auto_detection():
    aux = resolve_auxiliary(config(), secrets(ANTHROPIC_API_KEY="k"))
    assert aux.provider == "anthropic"


def test_create_transport_picks_the_api_shape():
    openai_ep = resolve_endpoint(config(model={"provider": "openrouter"}).model, secrets())
    transport = create_transport(openai_ep, "k", timeout=3)
    assert isinstance(transport, OpenAIChatTransport)
    assert (transport.provider, transport.timeout) == ("openrouter", 3)
    anthropic_ep = resolve_endpoint(config(model={"provider": "anthropic"}).model, secrets())
    assert isinstance(create_transport(anthropic_ep, "k", timeout=3), AnthropicMessagesTransport)


def test_importing_providers_does_not_import_the_sdks():
    import subprocess
    import sys

    code = (
        "import sys, herald.providers; "
        "print(sorted(m for m in ('openai', 'anthropic', 'httpx', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
