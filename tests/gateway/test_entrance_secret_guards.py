"""The adapters apply the entrance-secret rule themselves too: building one directly
with a weak secret fails, and `create_adapter` sees reuse of the web chat's login
token (kept only as a hash) through the lifecycle's settings."""

from __future__ import annotations

from pathlib import Path

import pytest

import herald.gateway.platforms.api.adapter as api
import herald.gateway.platforms.webhook.adapter as webhook
from herald.config import WeakSecretError
from herald.gateway.platforms.api.adapter import ApiAdapter
from herald.gateway.platforms.web import create_token
from herald.gateway.platforms.webhook.adapter import WebhookAdapter
from herald.testing.homes import make_home
from herald.testing.strong_secrets import API_KEY, WEBHOOK_SECRET


@pytest.mark.parametrize("weak", ["bar-secret", "changeme" * 4, "0123456789abcdef0123456789"])
def test_adapters_built_directly_refuse_a_weak_secret(weak: str) -> None:
    with pytest.raises(WeakSecretError, match=r"gateway\.platforms\.api\.api_key"):
        ApiAdapter(api_key=weak)
    with pytest.raises(WeakSecretError, match=r"gateway\.platforms\.webhook\.secret"):
        WebhookAdapter(secret=weak)
    assert ApiAdapter(api_key=API_KEY).keyring.caller_for(API_KEY) is not None
    assert WebhookAdapter(secret=WEBHOOK_SECRET).secret == WEBHOOK_SECRET


@pytest.mark.parametrize(
    ("module", "section"),
    [(api, {"api_key": "${HERALD_API_KEY}"}), (webhook, {"secret": "${HERALD_API_KEY}"})],
)
def test_reusing_the_web_login_token_is_refused(tmp_path: Path, module, section) -> None:
    token = create_token(tmp_path / "home")
    name = "api" if module is api else "webhook"
    settings = make_home(
        tmp_path / "home",
        {"gateway": {"platforms": {name: {"enabled": True, "port": 0, **section}}}},
        {"HERALD_API_KEY": token},
    )
    section_config = getattr(settings.config.gateway.platforms, name)
    with pytest.raises(WeakSecretError, match="reused with the web chat login token"):
        module.create_adapter(
            section_config, settings.secrets, settings=settings, home=settings.home
        )
