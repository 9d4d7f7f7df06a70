"""Issue 14, redaction: URL credentials of any scheme, secret query and form
parameters, properties/INI lines, more vendor prefixes, and no reading of a
secret-field rule across a line break."""

from __future__ import annotations

import pytest

from herald.safety import redact
from herald.safety.redaction import MASK, redaction_rules

# (text, secret that must disappear, rule that must report it)
POSITIVES = [
    # credentials in URLs, any scheme
    ("redis://:hunter2pass@cache.internal:6379/0", "hunter2pass", "url_credentials"),
    ("rediss://default:S3cr3tPass@redis.example.com", "S3cr3tPass", "url_credentials"),
    (
        "git remote set-url origin https://ghs_TOKEN123abc@github.com/me/repo.git",
        "ghs_TOKEN123abc",
        "url_credentials",
    ),
    (
        "https://x-access-token:abcDEF123456@github.com/me/repo",
        "abcDEF123456",
        "url_credentials",
    ),
    (
        "https://oauth2:glpat-abcdEFGH1234@gitlab.com/g/p.git",
        "glpat-abcdEFGH1234",
        "url_credentials",
    ),
    (
        "https://0123456789abcdef0123456789abcdef@github.com/me/r",
        "0123456789abcdef0123",
        "url_credentials",
    ),
    ("ssh://deploy:pa55word@host.example/repo", "pa55word", "url_credentials"),
    ("ftp://anon:ftpPass99@ftp.example.org/pub", "ftpPass99", "url_credentials"),
    ("amqp://guest:rabbitPw1@mq:5672/vhost", "rabbitPw1", "url_credentials"),
    ("amqps://svc:Rabbit_Pw-2@mq.example.com", "Rabbit_Pw-2", "url_credentials"),
    (
        "mongodb+srv://app:M0ngoPass@cluster0.abc.mongodb.net/db",
        "M0ngoPass",
        "url_credentials",
    ),
    ("postgresql://app:pg%40pass@db/app", "pg%40pass", "url_credentials"),
    ("mysql://root:my$ql!pw@127.0.0.1/db", "my$ql!pw", "url_credentials"),
    ("DATABASE_URL=postgres://u:Pw12345x@h/db", "Pw12345x", "url_credentials"),
    ("smtp://mailer:MailPw77@smtp.example.com:587", "MailPw77", "url_credentials"),
    # secret query parameters
    ("GET https://api.example.com/v1?api_key=abc123def456", "abc123def456", "query_secret"),
    ("https://x.example/cb?code=1&access_token=tok_ABCdef12345", "tok_ABCdef12345", "query_secret"),
    ("https://x.example/?token=QWErty123456&page=2", "QWErty123456", "query_secret"),
    ("https://maps.example.com/api?key=AbCd1234EfGh5678", "AbCd1234EfGh5678", "query_secret"),
    ("https://x.example/?client_secret=cs_9f8e7d6c5b4a", "cs_9f8e7d6c5b4a", "query_secret"),
    (
        "https://bucket.s3.amazonaws.com/o?X-Amz-Signature=abcdef0123456789abcdef",
        "abcdef0123456789abcdef",
        "query_secret",
    ),
    ("https://blob.example/x?sv=2020&sig=Zm9vYmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4", "query_secret"),
    ("https://x.example/login?user=me&password=hunter2xyz", "hunter2xyz", "query_secret"),
    ("https://x.example/?secret=s3cr3tvalue1", "s3cr3tvalue1", "query_secret"),
    ("https://x.example/?apikey=KEY0123456789", "KEY0123456789", "query_secret"),
    ("wss://stream.example/ws?auth=AuthTok998877", "AuthTok998877", "query_secret"),
    # form bodies
    ("curl -d 'username=me&password=FormPw123' https://x", "FormPw123", "query_secret"),
    (
        "grant_type=refresh_token&refresh_token=rt_7f6e5d4c3b2a1&client_id=x",
        "rt_7f6e5d4c3b2a1",
        "query_secret",
    ),
    ("client_id=abc&client_secret=ZZsecret998877", "ZZsecret998877", "query_secret"),
    # properties / INI / dotenv in lower case
    ("password=hunter2secret", "hunter2secret", "properties_secret"),
    ("spring.datasource.password=SpringPw42", "SpringPw42", "properties_secret"),
    ("db.password = Pr0pPass", "Pr0pPass", "properties_secret"),
    ("  api_key = iniKey12345", "iniKey12345", "properties_secret"),
    ("secret_key=django-insecure-abc123xyz", "django-insecure-abc123xyz", "properties_secret"),
    ("auth_token: yamlTok3n99", "yamlTok3n99", "properties_secret"),
    ("mail.smtp.password:SmtpPw001", "SmtpPw001", "properties_secret"),
    ("[database]\nuser = app\npassword = IniPw2024\n", "IniPw2024", "properties_secret"),
    (
        "export aws_secret_access_key=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI",
        "properties_secret",
    ),
    # vendor prefixes
    (
        "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef",
        "A0123456789-1234567890123",
        "vendor_token",
    ),
    ("syt_aGVyYWxk_vHatzNXEQygcMuKHqTRr_0PEec4", "vHatzNXEQygcMuKHqTRr", "vendor_token"),
    ("fw_3ZabcdefGHIJKLmnopqrstuvWX", "3ZabcdefGHIJKLmnop", "vendor_token"),
    ("fpk_0123456789abcdef0123456789abcdef", "0123456789abcdef01234", "vendor_token"),
    ("tvly-dev-AbCdEfGhIjKlMnOpQrStUvWxYz012345", "AbCdEfGhIjKlMnOpQrSt", "vendor_token"),
    ("tvly-AbCdEfGhIjKlMnOpQrStUvWxYz012345", "AbCdEfGhIjKlMnOpQrSt", "vendor_token"),
    ("exa_0123456789abcdefABCDEF0123", "0123456789abcdefABCDEF", "vendor_token"),
    ("ntn_123456789012AbCdEfGhIjKlMnOpQrStUvWxYz0123456", "123456789012AbCdEfGh", "vendor_token"),
    (
        "sk_0123456789abcdef0123456789abcdef0123456789abcdef",
        "0123456789abcdef01234567",
        "vendor_token",
    ),
    ("secret_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg", "AbCdEfGhIjKlMnOpQrSt", "vendor_token"),
    ("r8_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "AbCdEfGhIjKlMnOpQr", "vendor_token"),
    ("lin_api_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab", "AbCdEfGhIjKlMnOpQrSt", "vendor_token"),
    ("shpat_0123456789abcdef0123456789abcdef", "0123456789abcdef0123", "vendor_token"),
    ("pat-na1-01234567-89ab-cdef-0123-456789abcdef", "01234567-89ab-cdef", "vendor_token"),
    ("dapi0123456789abcdef0123456789abcdef", "0123456789abcdef0123", "vendor_token"),
    ("sq0atp-AbCdEfGhIjKlMnOpQrStUv", "AbCdEfGhIjKlMnOpQrStUv", "vendor_token"),
    ("key-0123456789abcdef0123456789abcdef", "0123456789abcdef012345", "vendor_token"),
    ("glsa_AbCdEfGhIjKlMnOpQrStUvWxYz012345_0a1b2c3d", "AbCdEfGhIjKlMnOpQrSt", "vendor_token"),
    ("figd_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGhIjKlMnOpQrSt", "vendor_token"),
    ("hvs.CAESIAbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "CAESIAbCdEfGhIjKlMnOp", "vendor_token"),
    ("dckr_pat_AbCdEfGhIjKlMnOpQrStUvWxYz0", "AbCdEfGhIjKlMnOpQrStUv", "vendor_token"),
]

# Text that must come back unchanged.
UNCHANGED = [
    "if not HA_TOKEN:\n    raise ValueError('HA_TOKEN is not set')",
    "if not OPENAI_API_KEY:\n    return None",
    "assert API_KEY\nprint('ok')",
    "while not SESSION_TOKEN:\n    time.sleep(1)",
    "token = os.environ['GITHUB_TOKEN']",
    "password = getpass.getpass()",
    "password = input('Password: ')",
    "api_key = settings.api_key",
    "secret = config.get('secret')",
    "token=$(cat token.txt)",
    "password=${DB_PASSWORD}",
    "key = 'name'",
    "https://github.com/example/repo.git",
    "https://user@github.com/example/repo.git",
    "ssh://git@github.com/example/repo.git",
    "git@github.com:example/repo.git",
    "https://example.com/search?q=token&page=2",
    "https://example.com/?key=value",
    "https://example.com/docs#password",
    "mailto:dev@example.com",
    "The password policy requires 12 characters.",
    "Set the key to your own value.",
    "sk_test is the prefix for Stripe test keys",
    "exa_search is a function name",
    "fw_update() refreshes the firmware",
    "keyboard=us",
    "token_count=4096",
    "max_tokens=512",
    "password_min_length=12",
    "primary_key=id",
    "key=value",
    "token=true",
    "redis://localhost:6379/0",
    "postgres://localhost/app",
    "amqp://mq:5672",
]


@pytest.mark.parametrize(("text", "secret", "rule"), POSITIVES)
def test_secret_is_masked(text: str, secret: str, rule: str) -> None:
    out = redact(text)
    assert secret not in out, (text, out)
    assert MASK in out
    assert rule in redaction_rules(text), (text, redaction_rules(text))


@pytest.mark.parametrize("text", UNCHANGED)
def test_text_is_unchanged(text: str) -> None:
    assert redact(text) == text
    assert redaction_rules(text) == ()


def test_url_keeps_host_and_user() -> None:
    out = redact("redis://:hunter2pass@cache.internal:6379/0")
    assert out == f"redis://:{MASK}@cache.internal:6379/0"
    out = redact("https://ghs_TOKEN123abc@github.com/me/repo.git")
    assert out == f"https://{MASK}@github.com/me/repo.git"
    out = redact("https://api.example.com/v1?api_key=abc123def456&page=2")
    assert out == f"https://api.example.com/v1?api_key={MASK}&page=2"


def test_properties_line_keeps_the_name() -> None:
    assert redact("spring.datasource.password=SpringPw42") == f"spring.datasource.password={MASK}"


def test_secret_field_rule_stays_on_its_line() -> None:
    text = "HA_TOKEN:\n    raise ValueError(x)"
    assert redact(text) == text
    text = "OPENAI_API_KEY=\nPATH=/usr/bin"
    assert redact(text) == text
