"""`redact`: mask secrets in text shown to people, logged or summarised.

Masked: API keys of common providers (OpenAI, Anthropic, OpenRouter, GitHub,
Slack, Google, AWS, Stripe, Hugging Face, Telegram bot tokens …),
Authorization / API-key headers, JWTs, passwords in URLs, UPPERCASE
secret-named assignments (``OPENAI_API_KEY=…``), JSON/YAML secret fields
(``"password": "…"``, ``api_key: …``), PEM private keys, and any exact value
registered with `register_secret_values` or passed as ``extra_secrets`` (the
secrets accessor's values, so a key with no recognisable shape is still
masked).

Left alone: ordinary assignments (``PATH=``, ``HOME=``), code that reads a key
by name (``os.environ["OPENAI_API_KEY"]``), references (``${TOKEN}``),
hashes and UUIDs.

Every pattern is compiled once, has bounded quantifiers and no nested
repetition, so a pass over 100 KB stays linear.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

MASK = "[REDACTED]"
_MIN_SECRET_LEN = 6

# Provider tokens. Each pattern starts with a literal (so a search skips
# ahead quickly) and checks the character before it with a lookbehind placed
# after the literal; group 1 is the visible prefix kept in front of the mask.
_TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        # OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-), OpenRouter (sk-or-v1-)
        r"(sk-(?<![\w-]sk-)(?:ant-(?:api|admin)\d{2}-|or-v1-|proj-|svcacct-|admin-|None-)?)"
        r"(?=[A-Za-z_-]{0,400}\d)[A-Za-z0-9_-]{20,400}",
        r"(gh[pousr]_(?<![\w-]gh._))[A-Za-z0-9]{30,255}",
        r"(github_pat_(?<![\w-]github_pat_))[A-Za-z0-9_]{22,255}",
        r"(xox[abposre]-(?<![\w-]xox.-))[A-Za-z0-9-]{10,250}",
        r"(https://hooks\.slack\.com/(?:services|workflows)/)[A-Za-z0-9/_-]{20,200}",
        r"(AIza(?<![\w-]AIza))[0-9A-Za-z_-]{35}",
        r"(ya29\.(?<![\w-]ya29\.))[0-9A-Za-z_-]{20,2000}",
        r"(GOCSPX-(?<![\w-]GOCSPX-))[0-9A-Za-z_-]{20,100}",
        r"(A(?:KIA|SIA|BIA|CCA)(?<![A-Z0-9]....))[0-9A-Z]{16}(?![A-Z0-9])",
        r"(:)AA(?<=\d{8}:AA)[A-Za-z0-9_-]{33}(?![\w-])",  # Telegram bot token
        r"(sk_(?<![\w-]sk_)(?:live|test)_)[0-9A-Za-z]{16,250}",  # Stripe
        r"(rk_(?<![\w-]rk_)(?:live|test)_)[0-9A-Za-z]{16,250}",
        r"(hf_(?<![\w-]hf_))[A-Za-z0-9]{30,100}",
        r"(gsk_(?<![\w-]gsk_))[A-Za-z0-9]{40,100}",  # Groq
        r"(xai-(?<![\w-]xai-))[A-Za-z0-9]{40,200}",
        r"(pplx-(?<![\w-]pplx-))[A-Za-z0-9]{40,100}",
        r"(glpat-(?<![\w-]glpat-))[A-Za-z0-9_-]{20,100}",  # GitLab
        r"(npm_(?<![\w-]npm_))[A-Za-z0-9]{36}",
        r"(pypi-(?<![\w-]pypi-))[A-Za-z0-9_-]{50,400}",
        r"(SG\.(?<![\w-]SG\.))[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",  # SendGrid
        r"(dop_v1_(?<![\w-]dop_v1_))[a-f0-9]{64}",  # DigitalOcean
    )
)
_JWT_RE = re.compile(
    r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{8,8000}\.[A-Za-z0-9_-]{8,4000}"
)
# Authorization: Bearer xyz / Proxy-Authorization / X-Api-Key style headers.
_AUTH_HEADER_RE = re.compile(
    r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|bot|digest|apikey)\s+)?)"
    r"([^\s\"',;]{6,4000})"
)
_KEY_HEADER_RE = re.compile(
    r"(?i)\b((?:x-)?(?:api-key|api_key|apikey|auth-token|access-token|goog-api-key|subscription-key)"
    r"\s*:\s*)([^\s\"',;]{6,4000})"
)
_URL_PASSWORD_RE = re.compile(
    r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@]{1,256}:)([^\s@/]{1,256})(@)"
)
# NAME=value where NAME is UPPERCASE and has a secret word as one of its parts.
_SECRET_WORDS = r"(?:KEY|KEYS|TOKEN|TOKENS|SECRET|SECRETS|PASSWORD|PASSWD|PASS|PASSPHRASE|PWD|CREDENTIAL|CREDENTIALS|AUTH|APIKEY|DSN|COOKIE|SESSION|PRIVATE)"
_NOT_SECRET_SUFFIX = re.compile(
    r"_(?:FILE|PATH|DIR|SOCK|URL|ENDPOINT|HOST|PORT|ID|NAME|TYPE|MODE|VERSION|LENGTH|SIZE|LIMIT|COUNT|TIMEOUT|ENV|REGION|USER|USERNAME)$"
)
_ENV_ASSIGN_RE = re.compile(
    r"(?<![A-Za-z0-9_$])((?:[A-Z0-9]+_)*" + _SECRET_WORDS + r"(?:_[A-Z0-9]+)*)"
    r"(\s*[=:]\s*)([\"']?)([^\s\"']{1,4000})(\3)"
)
_FIELD_NAMES = (
    r"(?:api[_-]?key|apikey|secret|secret[_-]?key|client[_-]?secret|token|access[_-]?token"
    r"|refresh[_-]?token|id[_-]?token|auth[_-]?token|bearer[_-]?token|bot[_-]?token|password|passwd"
    r"|passphrase|private[_-]?key|aws[_-]?secret[_-]?access[_-]?key|credentials?|webhook[_-]?secret"
    r"|signing[_-]?secret|session[_-]?token)"
)
_JSON_FIELD_RE = re.compile(
    r"(?i)(\"(?:" + _FIELD_NAMES + r"|authorization)\"\s*:\s*\")((?:[^\"\\\n]|\\.){1,8000})(\")"
)
_YAML_FIELD_RE = re.compile(
    r"(?im)^(\s{0,64}(?:-\s+)?[\"']?"
    + _FIELD_NAMES
    + r"[\"']?\s*:[ \t]+)([\"']?)([^\s\"'#][^\n\"']{0,4000}?)(\2)[ \t]*$"
)
_PEM_BEGIN_RE = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ ){0,4})PRIVATE KEY( BLOCK)?-----")
_PEM_END_RE = re.compile(r"-----END ((?:[A-Z0-9]+ ){0,4})PRIVATE KEY( BLOCK)?-----")
_PLACEHOLDER_RE = re.compile(
    r"(?i)^(?:\$|<|\{|\[|%|\*{3}|x{3,}|\.{3}|null|none|nil|true|false|undefined|changeme|example|"
    r"your[_-]|redacted|\[redacted\]|os\.|process\.env|env\(|getenv|secrets\.|"
    r"(?:str|int|bytes|bool|float|string|number|boolean|Optional|SecretStr|Any)\b)"
)

_registered: frozenset[str] = frozenset()
_registered_re: re.Pattern[str] | None = None
_lock = threading.Lock()
_extra_cache: dict[frozenset[str], re.Pattern[str]] = {}


def _values_pattern(values: Iterable[str]) -> re.Pattern[str] | None:
    usable = sorted({v for v in values if v and len(v) >= _MIN_SECRET_LEN}, key=len, reverse=True)
    if not usable:
        return None
    return re.compile("|".join(re.escape(v) for v in usable))


def register_secret_values(values: Iterable[str]) -> None:
    """Also mask these exact values everywhere (e.g. ``Secrets.secret_values()``).
    Adds to the values registered before; values shorter than 6 characters
    are ignored (masking them would mangle ordinary text)."""
    global _registered, _registered_re
    with _lock:
        _registered = _registered | {v for v in values if v and len(v) >= _MIN_SECRET_LEN}
        _registered_re = _values_pattern(_registered)


def clear_secret_values() -> None:
    """Forget every registered value (for tests and profile switches)."""
    global _registered, _registered_re
    with _lock:
        _registered = frozenset()
        _registered_re = None


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER_RE.match(value))


def _redact_pem(text: str) -> str:
    if "PRIVATE KEY" not in text:
        return text
    out: list[str] = []
    pos = 0
    while True:
        begin = _PEM_BEGIN_RE.search(text, pos)
        if begin is None:
            break
        out.append(text[pos : begin.start()])
        end = _PEM_END_RE.search(text, begin.end())
        out.append(begin.group() + MASK)
        if end is None:  # truncated key: mask to the end
            pos = len(text)
            break
        out.append(end.group())
        pos = end.end()
    out.append(text[pos:])
    return "".join(out)


def _mask_env(match: re.Match[str]) -> str:
    name, sep, quote, value, close = match.groups()
    if _NOT_SECRET_SUFFIX.search(name) or _is_placeholder(value) or name in ("PWD", "OLDPWD"):
        return match.group()
    if value.isdigit() and len(value) <= 10:  # MAX_TOKENS=4096, SESSION_TTL=3600
        return match.group()
    return f"{name}{sep}{quote}{MASK}{close}"


def _mask_yaml(match: re.Match[str]) -> str:
    head, quote, value, close = match.groups()
    if _is_placeholder(value.strip()):
        return match.group()
    return f"{head}{quote}{MASK}{close}"


def _mask_json(match: re.Match[str]) -> str:
    head, value, close = match.groups()
    if _is_placeholder(value) or not value.strip():
        return match.group()
    return f"{head}{MASK}{close}"


_AUTH_SCHEME_RE = re.compile(r"(?i)(?:bearer|basic|token|bot|digest|apikey)\s+$")


def _mask_header(match: re.Match[str]) -> str:
    head, value = match.groups()
    if _is_placeholder(value) or value == MASK:
        return match.group()
    # Without a scheme word, prose ("Authorization: required") is not a credential.
    if not _AUTH_SCHEME_RE.search(head) and len(value) < 16 and not any(c.isdigit() for c in value):
        return match.group()
    return head + MASK


def redact(text: str, *, extra_secrets: Iterable[str] = ()) -> str:
    """text with every secret it contains replaced by ``[REDACTED]``."""
    if not text:
        return text
    pattern = _registered_re
    if pattern is not None:
        text = pattern.sub(MASK, text)
    extra = frozenset(extra_secrets)
    if extra:
        extra_re = _extra_cache.get(extra)
        if extra_re is None:
            extra_re = _values_pattern(extra)
            if extra_re is not None and len(_extra_cache) < 64:
                _extra_cache[extra] = extra_re
        if extra_re is not None:
            text = extra_re.sub(MASK, text)
    text = _redact_pem(text)
    for token_re in _TOKEN_PATTERNS:
        text = token_re.sub(lambda m: m.group(1) + MASK, text)
    if "eyJ" in text:
        text = _JWT_RE.sub(MASK, text)
    text = _AUTH_HEADER_RE.sub(_mask_header, text)
    text = _KEY_HEADER_RE.sub(_mask_header, text)
    if "://" in text:
        text = _URL_PASSWORD_RE.sub(lambda m: m.group(1) + MASK + m.group(3), text)
    text = _ENV_ASSIGN_RE.sub(_mask_env, text)
    if '"' in text:
        text = _JSON_FIELD_RE.sub(_mask_json, text)
    if ":" in text:
        text = _YAML_FIELD_RE.sub(_mask_yaml, text)
    return text


def secret_kinds(text: str) -> list[str]:
    """Names of the kinds of real-looking secrets in text (used by the
    injection scanner; placeholders such as ``your-key-here`` don't count)."""
    found: list[str] = []
    if _PEM_BEGIN_RE.search(text):
        found.append("private key")
    if any(p.search(text) for p in _TOKEN_PATTERNS):
        found.append("API key or token")
    if "eyJ" in text and _JWT_RE.search(text):
        found.append("JWT")
    if "://" in text:
        for m in _URL_PASSWORD_RE.finditer(text):
            if not _is_placeholder(m.group(2)) and m.group(2).lower() not in (
                "password",
                "pass",
                "pw",
            ):
                found.append("password in a URL")
                break
    for m in _ENV_ASSIGN_RE.finditer(text):
        value = m.group(4)
        if (
            len(value) >= 12
            and not _is_placeholder(value)
            and not _NOT_SECRET_SUFFIX.search(m.group(1))
            and re.search(r"\d", value)
            and re.search(r"[A-Za-z]", value)
        ):
            found.append("secret assignment")
            break
    return found
