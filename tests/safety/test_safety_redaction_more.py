"""Issue 28, redaction: secret-named fields in any spelling (prefixed,
camelCase, dotted, in JSON, YAML, properties and command-line flags),
word-like values behind strong secret names, and ``.netrc`` passwords."""

from __future__ import annotations

import pytest

from herald.safety import redact
from herald.safety.redaction import MASK, redaction_rules

# (text, secret that must disappear)
POSITIVES = [
    # prefixed and dotted names in properties / dotenv lines
    ("raw_secret=opensesame", "opensesame"),
    ("client_secret = tangerine", "tangerine"),
    ("app.api.key=abc123def", "abc123def"),
    ("app.client.secret: marmalade", "marmalade"),
    ("stripe.secret.key=whatever9", "whatever9"),
    ("service.auth.passphrase=correct horse battery staple", "correct horse"),
    ("ldap.bind-password=moonlight", "moonlight"),
    ("oauth.client-secret = blueberry", "blueberry"),
    # JSON fields, any spelling
    ('{"raw_secret": "opensesame"}', "opensesame"),
    ('{"dbPassword": "tangerine"}', "tangerine"),
    ('{"stripeSecretKey": "bluebird"}', "bluebird"),
    ('{"DB_PASSWORD":"hunter22"}', "hunter22"),
    ('{"x-api-key": "lemonade"}', "lemonade"),
    ('{"smtp.password": "seashell"}', "seashell"),
    # YAML fields, any spelling
    ("  webhookSecret: marmalade", "marmalade"),
    ("db_password: tangerine", "tangerine"),
    ("    mqttPassword: 'swordfish'", "swordfish"),
    ("- clientSecret: raspberry", "raspberry"),
    # command-line flags
    ("mysql --user root --password=tangerine db", "tangerine"),
    ("vault login --client-secret raspberry", "raspberry"),
    ("tool --api-key bluebird123 run", "bluebird123"),
    ("./deploy --db-password swordfish", "swordfish"),
    # .netrc
    ("machine api.example.com\n  login bob\n  password tangerine\n", "tangerine"),
    ("machine github.com login me password gh0stwriter", "gh0stwriter"),
    ("default login anonymous password opensesame", "opensesame"),
    ("machine ftp.example.org login alice password 'p@ss word'", "p@ss"),
    # second round, written after the first passed
    ("SMTP_PASS: lighthouse", "lighthouse"),
    ('"privateKey": "walrus-ocean"', "walrus-ocean"),
    ("db:\n  password: lighthouse\n", "lighthouse"),
    ("<password>lighthouse</password>", "lighthouse"),
    ("<apiKey>lighthouse</apiKey>", "lighthouse"),
    ("app.oauth.client_secret=lighthouse", "lighthouse"),
    ("psql --password=lighthouse", "lighthouse"),
    ("aws configure set --secret-key lighthouse", "lighthouse"),
    ("machine 10.0.0.5 login admin password lighthouse", "lighthouse"),
    ("apiKey: 'lighthouse'", "lighthouse"),
    ('{"aws_secret_access_key":"lighthouse"}', "lighthouse"),
    ("credentials = lighthouse", "lighthouse"),
]


@pytest.mark.parametrize(("text", "secret"), POSITIVES)
def test_secret_named_fields_are_masked(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, (text, out)
    assert MASK in out
    assert redaction_rules(text)


UNCHANGED = [
    '{"token_type": "bearer"}',
    '{"max_tokens": 512}',
    '{"password_hint": "your pet"}',
    '{"secretary": "Ann"}',
    '{"api_key_id": "key-id-1"}',
    "passwordless=true",
    "secret_name=prod-db",
    "api.key.length=32",
    "client_secret=${CLIENT_SECRET}",
    "db.password=<your password>",
    "password reset link sent",
    "machine learning needs data\npassword policy is strict",
    "tool --password-file /run/secrets/db",
    "tool --token-count 5",
    "mysql --password db",
    "git commit --author 'Password Team <pw@example.com>'",
    "api_key = settings.api_key",
    "client_secret: null",
    "passwords: 3 rotated this week",
    "The secret to good code is tests.",
    '{"token_limit": 4096}',
    "secret_santa=alice",
    "password_length: 16",
    "Use --password to be prompted.",
    "max_tokens: 1024",
    "<token-count>12</token-count>",
    "<password/>",
]


@pytest.mark.parametrize("text", UNCHANGED)
def test_look_alikes_are_unchanged(text: str) -> None:
    assert redact(text) == text, redact(text)


def test_names_survive_masking() -> None:
    assert redact("app.api.key=abc123def") == f"app.api.key={MASK}"
    assert redact('{"dbPassword": "tangerine"}') == f'{{"dbPassword": "{MASK}"}}'
    out = redact("machine github.com login me password gh0stwriter")
    assert out == f"machine github.com login me password {MASK}"
