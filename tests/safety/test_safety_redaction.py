"""redact(): secrets masked, ordinary text untouched."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from herald.config import Secrets
from herald.safety import clear_secret_values, redact, register_secret_values

# (text, secret that must disappear)
POSITIVES = [
    ("OPENAI_API_KEY=sk-proj-abc123DEF456ghi789JKL012mno345PQR", "abc123DEF456ghi789"),
    ("key sk-abcdefghij1234567890ABCDEFGHIJ here", "abcdefghij1234567890"),
    ("sk-ant-api03-AbCdEf1234567890AbCdEf1234567890xyz", "AbCdEf1234567890AbCdEf"),
    (
        "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "0123456789abcdef0123",
    ),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ012345", "0123456789abcdefghijABCDEFGHIJ"),
    ("gho_0123456789abcdefghijABCDEFGHIJ012345", "0123456789abcdefghij"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789",
        "abcdefghijklmnopqrstuvwxyz",
    ),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx"),
    (
        "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    ("AIzaSyA-0123456789abcdefghijklmnopqrstu", "0123456789abcdefghijklmnopqrstu"),
    ("ya29.a0AfH6SMBx0123456789abcdefghijklmnop", "a0AfH6SMBx0123456789"),
    ("aws AKIAIOSFODNN7EXAMPLE x", "IOSFODNN7EXAMPLE"),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawc", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawc"),
    ("sk_live_0123456789abcdefABCDEF", "0123456789abcdefABCDEF"),
    ("hf_abcdefghijklmnopqrstuvwxyz01234567", "abcdefghijklmnopqrstuvwxyz"),
    ("glpat-abcdefghij0123456789", "abcdefghij0123456789"),
    ("Authorization: Bearer abc.def.ghi123456", "abc.def.ghi123456"),
    ('curl -H "Authorization: Basic dXNlcjpwYXNz" x', "dXNlcjpwYXNz"),
    ("authorization=Token 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    ("X-Api-Key: 0123456789abcdef", "0123456789abcdef"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("postgres://admin:hunter2@db.example.com:5432/app", "hunter2"),
    ("https://user:p%40ss-word@example.com/x", "p%40ss-word"),
    ("export GITHUB_TOKEN=gho_short", "gho_short"),
    ("DB_PASSWORD='s3cr3t-value'", "s3cr3t-value"),
    ('STRIPE_SECRET_KEY="rk_abc_123_def"', "rk_abc_123_def"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("ANTHROPIC_API_KEY: anthropic-style-value-123", "anthropic-style-value-123"),
    ('{"api_key": "abc123xyz789", "name": "x"}', "abc123xyz789"),
    ('{"password": "hunter2"}', "hunter2"),
    ('{"Authorization": "Bearer abcdef123456"}', "abcdef123456"),
    ('{"client_secret":"s3cr3t\\"q"}', 's3cr3t\\"q'),
    ("password: hunter2", "hunter2"),
    ("  client_secret: 'abcd1234efgh'", "abcd1234efgh"),
    ("- token: tok-12345-abcde", "tok-12345-abcde"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA",
    ),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----", "MIIEvQIBADANBg"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE (truncated", "b3BlbnNzaC1rZXktdjE"),
]

NEGATIVES = [
    "PATH=/usr/local/bin:/usr/bin",
    "HOME=/home/alice",
    "PWD=/home/alice/src",
    "SHELL=/bin/zsh",
    'key = os.environ["OPENAI_API_KEY"]',
    "api_key = os.getenv('ANTHROPIC_API_KEY')",
    "token = config['token']",
    "token: ${GITHUB_TOKEN}",
    "password: ${{ secrets.DB_PASSWORD }}",
    "API_KEY=your-api-key-here",
    "OPENAI_API_KEY=<your key>",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "MAX_TOKENS=4096",
    "SESSION_TIMEOUT=3600",
    "SSH_AUTH_SOCK=/tmp/ssh-XYZ/agent.123",
    "GOOGLE_APPLICATION_CREDENTIALS_FILE=/etc/gcp.json",
    "KEYBOARD_LAYOUT=us",
    "the task-runner-configuration-v2 file",
    "risk-assessment-framework-2024-final",
    "password: str",
    '"max_tokens": 1024',
    '"token_count": "5"',
    "authorization: required",
    "class .sk-loading-spinner-container {}",
    "https://example.com:8080/path@v2",
    "user@example.com wrote: hello",
    "The public key is -----BEGIN PUBLIC KEY-----",
    "Call the tokenizer with max_length=512",
    "",
]


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    clear_secret_values()
    yield
    clear_secret_values()


@pytest.mark.parametrize(("text", "secret"), POSITIVES)
def test_secrets_are_masked(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, out
    assert "[REDACTED]" in out


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == text


def test_provider_prefix_stays_visible() -> None:
    assert redact("sk-ant-api03-AbCdEf1234567890AbCdEf1234567890xyz") == "sk-ant-api03-[REDACTED]"
    assert redact("ghp_0123456789abcdefghijABCDEFGHIJ012345") == "ghp_[REDACTED]"
    assert redact("postgres://a:b123@h/db") == "postgres://a:[REDACTED]@h/db"


def test_surrounding_text_is_kept() -> None:
    text = "before OPENAI_API_KEY=sk-abcdefghij1234567890ABCDEFGHIJ after\nnext line"
    assert redact(text) == "before OPENAI_API_KEY=[REDACTED] after\nnext line"


def test_extra_secrets_are_masked() -> None:
    out = redact("the value is plainvalue42 and short", extra_secrets=["plainvalue42", "sh"])
    assert out == "the value is [REDACTED] and short"


def test_registered_values_are_masked_everywhere(tmp_path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("CUSTOM_TOKEN=no-recognisable-shape-xyz\n")
    secrets = Secrets(env_file, environ={})
    register_secret_values(secrets.secret_values())
    assert redact("got no-recognisable-shape-xyz back") == "got [REDACTED] back"
    register_secret_values(["another-value-1"])
    assert redact("no-recognisable-shape-xyz another-value-1") == "[REDACTED] [REDACTED]"
    clear_secret_values()
    assert redact("got no-recognisable-shape-xyz back") == "got no-recognisable-shape-xyz back"


def test_longest_registered_value_wins() -> None:
    register_secret_values(["abcdef", "abcdefghijkl"])
    assert redact("abcdefghijkl") == "[REDACTED]"


def test_redaction_is_idempotent() -> None:
    for text, _ in POSITIVES:
        once = redact(text)
        assert redact(once) == once
