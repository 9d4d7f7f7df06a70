"""`gateway.platforms.whatsapp`: numbers in any usual spelling, and errors that say
what to set."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from herald.config.schema_whatsapp import WhatsAppPlatformConfig
from herald.gateway.lifecycle import load_adapters
from herald.testing.homes import make_home


def test_allowed_numbers_are_one_spelling() -> None:
    section = WhatsAppPlatformConfig(
        allowed_users=["+1 (555) 000-0010", "15550000020", "+15550000030", "*"]
    )
    assert section.allowed_users == ["+15550000010", "+15550000020", "+15550000030", "*"]


@pytest.mark.parametrize("bad", ["@kerry", "kerry", "+1 555", "+1234567890123456"])
def test_a_value_that_is_not_a_number_is_refused_with_the_form_to_use(bad: str) -> None:
    with pytest.raises(ValidationError) as caught:
        WhatsAppPlatformConfig(allowed_users=[bad])
    assert "international form" in str(caught.value) and "+15551234567" in str(caught.value)


def test_a_missing_secret_names_the_setting_and_where_to_put_it(tmp_path: Path) -> None:
    settings = make_home(
        tmp_path / "home",
        {
            "gateway": {
                "platforms": {
                    "whatsapp": {
                        "enabled": True,
                        "phone_number_id": "106540352242922",
                        "access_token": "${WHATSAPP_ACCESS_TOKEN}",
                        "app_secret": "${WHATSAPP_APP_SECRET}",
                        "allowed_users": ["+15550000010"],
                    }
                }
            }
        },
        {"WHATSAPP_ACCESS_TOKEN": "EAAG-token", "WHATSAPP_APP_SECRET": "s3cr3t"},
    )
    adapters, problems = load_adapters(settings)
    assert adapters == []
    (problem,) = problems
    assert "gateway.platforms.whatsapp.verify_token" in problem
    assert "WHATSAPP_VERIFY_TOKEN" in problem and ".env" in problem
