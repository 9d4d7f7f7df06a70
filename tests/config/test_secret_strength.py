"""The one rule for secrets that guard a served entrance (issue 41): a table of good and
bad values, judged through each entrance's configured setting, plus reuse between
entrances and the message a refused entrance gives."""

from __future__ import annotations

import secrets as pysecrets

import pytest

from herald.config import (
    ENTRANCE_SECRETS,
    HeraldConfig,
    Secrets,
    WeakSecretError,
    check_entrance,
    require_entrance,
    secret_problem,
)
from herald.testing.strong_secrets import API_KEY, MCP_TOKEN, OTHER_SECRET, WEBHOOK_SECRET

# (value, None when it passes, else a phrase the reason contains)
TABLE = [
    # --- good: generated values of the advertised sizes, and long passphrase-like keys
    ("c53ecea8d5afead4aed43ef15c78d1d0", None),  # 32 hex (openssl rand -hex 16)
    ("DCD659A636229C7BFE9A04BE71B12315", None),  # 32 upper-case hex
    ("0v2jrlC35WQzHlwaw3LV2cvn", None),  # 24 url-safe base64
    (API_KEY, None),  # token_urlsafe(32), what `herald secrets new` makes
    (WEBHOOK_SECRET, None),
    (MCP_TOKEN, None),
    ("oqfyVKkceelA_rLjlU0EEk2LHfGk3JEtde3gAoIOmMo", None),
    ("Wq7#mZ2!vR9@kL4$xT8^nB3&", None),  # 24 mixed printable
    ("gravel orbit tundra fiddle quasar lantern", None),  # a six-word passphrase
    ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", None),  # sha256 hex
    ("sk-proj-Xq4Lm9Rt2Vw8Zp3Ns7Kd1Hf6", None),  # a real-looking key shape is fine
    # --- too short
    ("bar-secret", "placeholder"),  # the example (also a known placeholder)
    ("Xq4Lm9Rt2Vw8", "too short"),
    ("a1B2c3D4e5F6g7H8i9J", "too short"),  # 19 characters, all classes
    ("7f3a9c", "too short"),
    ("", "empty"),
    ("   ", "empty"),
    # --- placeholders, known values and template leftovers
    ("changeme", "placeholder"),
    ("CHANGEME-CHANGEME-CHANGEME-CHANGEME", "predictable"),
    ("secret", "placeholder"),
    ("password", "placeholder"),
    ("your-api-key", "placeholder"),
    ("sk-...", "placeholder"),
    ("sk-...................................", "placeholder"),
    ("<a long random string>", "placeholder"),
    ("<your-api-key-goes-here>", "placeholder"),
    ("{{ api_token }}", "placeholder"),
    ("test", "placeholder"),
    ("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "few different characters"),
    ("your-super-secret-api-key-change-me-please", "predictable"),
    ("test-api-key-0123456789abcdef", "predictable"),  # the old test fixture
    ("whsec-test-0123456789abcdef", "predictable"),
    ("e2e-webhook-secret-0123456789", "predictable"),
    ("herald-webhook-secret-for-testing-only", "predictable"),
    ("MyHeraldApiKeyPasswordExampleDefault", "predictable"),
    # --- repetition and short repeated patterns
    ("k" * 32, "few different characters"),
    ("abcabcabcabcabcabcabcabcabcabcabc", "few different characters"),
    ("Xy7!Xy7!Xy7!Xy7!Xy7!Xy7!Xy7!Xy7!", "few different characters"),
    ("Q9w#Lm2@Q9w#Lm2@Q9w#Lm2@Q9w#Lm2@Q9w#Lm2@", "predictable"),
    ("a8a8a8a8Zq0!Zq0!Zq0!Zq0!7777777777777777", "few different characters"),
    ("0000000000000000000000000000000000000000000000000001", "few different characters"),
    # --- keyboard and alphabet runs
    ("qwertyuiopasdfghjklzxcvbnm1234567890", "predictable"),
    ("abcdefghijklmnopqrstuvwxyz0123456789", "predictable"),
    ("1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik,9ol.", "predictable"),  # a keyboard column walk
    ("9876543210zyxwvutsrqponmlkjihgfedcba", "predictable"),
    ("!@#$%^&*()_+qwertyQWERTYasdfgh", "predictable"),
    # --- low entropy from few character classes / low diversity
    ("0110100110010110100101100110100110010110", "few different characters"),
    ("7579295581190480380932128020275787577083", None),  # 40 random digits: 133 bits
    ("31415926535897932384626433832795", "predictable"),  # 32 digits: only 106 bits
    ("3141592653589793238462", "predictable"),  # 22 digits: 73 bits
    ("aaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbcdefgh1234", "one character"),
    # --- whitespace slips
    (" " + API_KEY, "whitespace"),
    (API_KEY + "\n", "whitespace"),
]


@pytest.mark.parametrize(("value", "expected"), TABLE)
def test_secret_rule_table(value: str, expected: str | None) -> None:
    problem = secret_problem(value)
    if expected is None:
        assert problem is None, f"{value!r} was refused: {problem}"
    else:
        assert problem is not None and expected in problem, (value, problem)


def config_with(kind: str, value: str, extra: dict | None = None) -> tuple[HeraldConfig, Secrets]:
    """A config where entrance `kind` uses `value` through its usual `${NAME}` (or, for
    MCP, the secret mcp.serve.token_env names), plus `extra` env values."""
    entrance = ENTRANCE_SECRETS[kind]
    env = {entrance.env_name: value, **(extra or {})}
    platforms = {
        "api": {"api_key": "${HERALD_API_KEY}"} if "HERALD_API_KEY" in env else {},
        "webhook": {"secret": "${HERALD_WEBHOOK_SECRET}"} if "HERALD_WEBHOOK_SECRET" in env else {},
    }
    config = HeraldConfig.model_validate({"gateway": {"platforms": platforms}})
    return config, Secrets(None, environ=env)


KINDS = sorted(ENTRANCE_SECRETS)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("bar-secret", "placeholder"),
        ("Xq4Lm9Rt2Vw8", "too short"),
        ("qwertyuiopasdfghjklzxcvbnm1234567890", "predictable"),
        ("Xy7!Xy7!Xy7!Xy7!Xy7!Xy7!Xy7!Xy7!", "few different characters"),
        ("changeme", "placeholder"),
        ("c53ecea8d5afead4aed43ef15c78d1d0", None),
        ("0v2jrlC35WQzHlwaw3LV2cvn", None),
    ],
)
def test_each_entrance_applies_the_rule(kind: str, value: str, expected: str | None) -> None:
    config, secrets = config_with(kind, value)
    entrance = ENTRANCE_SECRETS[kind]
    if expected is None:
        assert require_entrance(entrance, config, secrets) == value
        return
    with pytest.raises(WeakSecretError) as caught:
        require_entrance(entrance, config, secrets)
    message = str(caught.value)
    assert expected in message
    assert value not in message or len(value) < 12  # never echo a (possibly real) secret
    setting = "HERALD_MCP_TOKEN" if kind == "mcp" else entrance.setting
    assert setting in message
    assert f"herald secrets new {entrance.env_name} --for {kind}" in message


@pytest.mark.parametrize(
    ("kind", "other_env", "other_setting"),
    [
        ("api", "HERALD_WEBHOOK_SECRET", "gateway.platforms.webhook.secret"),
        ("api", "HERALD_MCP_TOKEN", "HERALD_MCP_TOKEN (the secret mcp.serve.token_env names)"),
        ("webhook", "HERALD_API_KEY", "gateway.platforms.api.api_key"),
        ("webhook", "HERALD_MCP_TOKEN", "HERALD_MCP_TOKEN"),
        ("mcp", "HERALD_API_KEY", "gateway.platforms.api.api_key"),
        ("mcp", "HERALD_WEBHOOK_SECRET", "gateway.platforms.webhook.secret"),
    ],
)
def test_a_secret_reused_by_another_entrance_is_refused(
    kind: str, other_env: str, other_setting: str
) -> None:
    config, secrets = config_with(kind, OTHER_SECRET, {other_env: OTHER_SECRET})
    with pytest.raises(WeakSecretError, match="reused with " + other_setting.split(" ")[0]):
        require_entrance(ENTRANCE_SECRETS[kind], config, secrets)
    distinct, secrets = config_with(kind, OTHER_SECRET, {other_env: API_KEY + "x"})
    assert check_entrance(ENTRANCE_SECRETS[kind], distinct, secrets) is None


def test_reuse_with_a_hashed_secret_is_found_without_the_plain_value() -> None:
    config, secrets = config_with("api", OTHER_SECRET)
    login = {"the web chat login token": lambda candidate: candidate == OTHER_SECRET}
    problem = check_entrance(ENTRANCE_SECRETS["api"], config, secrets, matches_hashed=login)
    assert problem is not None and "reused with the web chat login token" in problem


def test_an_unset_secret_is_refused_with_the_command_that_makes_one() -> None:
    config = HeraldConfig()
    with pytest.raises(WeakSecretError) as caught:
        require_entrance(ENTRANCE_SECRETS["mcp"], config, Secrets(None, environ={}))
    assert "is not set" in str(caught.value)
    assert "herald secrets new HERALD_MCP_TOKEN --for mcp" in str(caught.value)


def test_generated_values_pass_nearly_always() -> None:
    """The rule must not refuse what a generator makes: 32 hex and 24 url-safe
    characters (the sizes the README names) and what `herald secrets new` writes."""
    refused = [
        v
        for v in (
            *(pysecrets.token_hex(16) for _ in range(2000)),
            *(pysecrets.token_urlsafe(18) for _ in range(2000)),
            *(pysecrets.token_urlsafe(32) for _ in range(500)),
        )
        if secret_problem(v)
    ]
    # measured at about 1 in 600,000 for 32 hex; 2 in 4,500 would mean the rule drifted
    assert len(refused) <= 1, refused
