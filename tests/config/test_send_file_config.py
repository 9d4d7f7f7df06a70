"""`gateway.send_file`: the size limit of files a turn sends to its chat, per platform."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from herald.config.schema_gateway import SendFileConfig


def test_a_platform_limit_overrides_the_default() -> None:
    config = SendFileConfig(max_mb=20, platform_max_mb={"discord": 10})
    assert config.max_bytes("discord") == 10_000_000
    assert config.max_bytes("telegram") == 20_000_000


@pytest.mark.parametrize(
    ("value", "says"),
    [({"discrod": 5}, "no platform named discrod"), ({"slack": 0}, "greater than 0")],
)
def test_a_bad_platform_limit_is_refused_with_the_reason(value: dict, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        SendFileConfig(platform_max_mb=value)
