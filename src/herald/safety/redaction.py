"""`redact`: mask secrets in text shown to people, logged or summarised.

It is a list of named rules (`RULES`; `redaction_rules` says which fired):
``private_key`` (PEM blocks), ``vendor_token`` (OpenAI, Anthropic,
OpenRouter, GitHub, Slack incl. ``xapp-``, Synapse ``syt_``, Google, AWS, Stripe, Hugging Face,
Telegram, Fireworks ``fw_``/``fpk_``, Tavily, Exa, Notion, ElevenLabs, Vault,
Grafana … keys), ``jwt``, ``url_credentials`` (``scheme://user:pass@`` for
any scheme, ``redis://:pass@``, ``https://TOKEN@github.com``),
``auth_header``, ``query_secret`` (``?api_key=``, ``&password=``, ``sig=`` in
URLs and form bodies), ``env_assignment`` (UPPERCASE secret names,
``OPENAI_API_KEY=…``), ``json_field`` and ``properties_secret`` (YAML,
properties and INI lines such as ``spring.datasource.password=…``), plus any
exact value registered with `register_secret_values` or passed as
``extra_secrets`` (``known_value``: the secrets accessor's values, so a key
with no recognisable shape is still masked).

Left alone: ordinary assignments (``PATH=``, ``HOME=``), code that reads or
names a key (``os.environ["OPENAI_API_KEY"]``, ``if not HA_TOKEN:`` — a rule
never reads across a line break), references (``${TOKEN}``), hashes and
UUIDs, placeholders.

Every pattern is compiled once, has bounded quantifiers and no nested
repetition, so a pass over 100 KB stays linear.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable

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
        r"(xapp-(?<![\w-]xapp-))\d-[A-Za-z0-9-]{20,250}",  # Slack app-level
        r"(syt_(?<![\w-]syt_))[A-Za-z0-9]{2,100}_[A-Za-z0-9]{20}_[A-Za-z0-9]{6}",  # Synapse
        r"(fw_(?<![\w-]fw_))[A-Za-z0-9]{20,200}",  # Fireworks
        r"(fpk_(?<![\w-]fpk_))[A-Za-z0-9]{20,200}",
        r"(tvly-(?<![\w-]tvly-)(?:dev-|prod-)?)[A-Za-z0-9]{20,200}",  # Tavily
        r"(exa_(?<![\w-]exa_))[A-Za-z0-9]{20,200}",
        r"(ntn_(?<![\w-]ntn_))[A-Za-z0-9]{30,200}",  # Notion
        r"(secret_(?<![\w-]secret_))[A-Za-z0-9]{40,100}(?![\w-])",  # Notion (legacy)
        r"(sk_(?<![\w-]sk_))(?!live_|test_)[A-Za-z0-9]{32,100}(?![\w-])",  # ElevenLabs
        r"(r8_(?<![\w-]r8_))[A-Za-z0-9]{30,100}",  # Replicate
        r"(lin_api_(?<![\w-]lin_api_))[A-Za-z0-9]{30,100}",  # Linear
        r"(shp(?:at|ss|ca|pa)_(?<![\w-]shp.._))[a-fA-F0-9]{32}",  # Shopify
        r"(pat-(?<![\w-]pat-)(?:na|eu|ap)\d-)[0-9a-f-]{36}",  # HubSpot
        r"(dapi(?<![\w-]dapi))[a-f0-9]{32}(?![\w-])",  # Databricks
        r"(sq0(?<![\w-]sq0)(?:atp|csp|idp)-)[0-9A-Za-z_-]{22,60}",  # Square
        r"(key-(?<![\w-]key-))[0-9a-f]{32}(?![\w-])",  # Mailgun
        r"(glsa_(?<![\w-]glsa_))[A-Za-z0-9]{32}_[a-f0-9]{8}",  # Grafana
        r"(glc_(?<![\w-]glc_))[A-Za-z0-9+/=]{32,400}",  # Grafana Cloud
        r"(figd_(?<![\w-]figd_))[A-Za-z0-9_-]{30,100}",  # Figma
        r"(hv[sbr]\.(?<![\w-]hv.\.))[A-Za-z0-9_-]{24,400}",  # HashiCorp Vault
        r"(dckr_pat_(?<![\w-]dckr_pat_))[A-Za-z0-9_-]{20,100}",  # Docker Hub
        r"(nvapi-(?<![\w-]nvapi-))[A-Za-z0-9_-]{40,100}",  # NVIDIA
        r"(whsec_(?<![\w-]whsec_))[A-Za-z0-9+/=]{24,100}",  # webhook signing secrets
        r"(sntry[su]_(?<![\w-]sntry._))[A-Za-z0-9+/=_-]{30,400}",  # Sentry
        r"(ATATT(?<![\w-]ATATT))[A-Za-z0-9_=-]{40,400}",  # Atlassian
        r"(csk-(?<![\w-]csk-))[a-z0-9]{40,100}",  # Cerebras
        r"(AGE-SECRET-KEY-1(?<![\w-]AGE-SECRET-KEY-1))[0-9A-Z]{50,70}",
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
# scheme://user:password@host (user may be empty: redis://:pass@host)
_URL_PASSWORD_RE = re.compile(
    r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@]{0,256}:)([^\s@/]{1,256})(@)"
)
# scheme://TOKEN@host: a user name that is a token (git remote set-url …)
_URL_TOKEN_USER_RE = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}://)([^\s:/@.%]{12,256})(@)")
_SECRET_PARAM_NAMES = (
    r"(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token"
    r"|private[_-]?token|session[_-]?token|x-amz-security-token|token|key|secret|client[_-]?secret"
    r"|sig|signature|x-amz-signature|password|passwd|pwd|pass|auth|sessionid|session[_-]?id"
    r"|credentials?|hmac|access[_-]?key)"
)
# ?api_key=…, &password=… in URLs and form bodies
_QUERY_SECRET_RE = re.compile(r"(?i)([?&;]" + _SECRET_PARAM_NAMES + r"=)([^&#\s\"'<>;]{1,4000})")
_PASSWORD_NAME_RE = re.compile(r"(?i)(?:^|[._-]|[?&;])(?:password|passwd|pwd|pass|passphrase)=?$")
# properties / INI / lower-case dotenv lines: spring.datasource.password=…
_PROPERTIES_RE = re.compile(
    r"(?im)^([ \t]{0,64}(?:export[ \t]+)?(?:[\w-]{1,64}\.){0,8}(?:[\w-]{0,64}[._-])?"
    r"(?:password|passwd|pwd|passphrase|secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|signing[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|token"
    r"|client[_-]?secret|credentials?)[ \t]*[=:][ \t]*)([\"']?)([^\s\"'#;][^\n\"']{0,4000}?)(\2)[ \t]*$"
)
_CODE_VALUE_RE = re.compile(r"[()\[\]{}]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# NAME=value where NAME is UPPERCASE and has a secret word as one of its parts.
_SECRET_WORDS = r"(?:KEY|KEYS|TOKEN|TOKENS|SECRET|SECRETS|PASSWORD|PASSWD|PASS|PASSPHRASE|PWD|CREDENTIAL|CREDENTIALS|AUTH|APIKEY|DSN|COOKIE|SESSION|PRIVATE)"
_NOT_SECRET_SUFFIX = re.compile(
    r"_(?:FILE|PATH|DIR|SOCK|URL|ENDPOINT|HOST|PORT|ID|NAME|TYPE|MODE|VERSION|LENGTH|SIZE|LIMIT|COUNT|TIMEOUT|ENV|REGION|USER|USERNAME)$"
)
_ENV_ASSIGN_RE = re.compile(
    r"(?<![A-Za-z0-9_$])((?:[A-Z0-9]+_)*" + _SECRET_WORDS + r"(?:_[A-Z0-9]+)*)"
    r"([ \t]*[=:][ \t]*)([\"']?)([^\s\"']{1,4000})(\3)"
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


def _value_is_secret(name: str, value: str) -> bool:
    """A credential rather than a placeholder, a reference or code."""
    value = value.strip()
    if not value or _is_placeholder(value) or value == MASK or _CODE_VALUE_RE.search(value):
        return False
    if name.lstrip().removeprefix("export").strip() in ("PWD", "OLDPWD") or value.startswith(
        ("/", "~/", "./", "../")
    ):
        return False  # the working directory, a path
    if _PASSWORD_NAME_RE.search(name):
        return len(value) >= 4
    return len(value) >= 8 and (any(c.isdigit() for c in value) or len(value) >= 16)


def _mask_query(match: re.Match[str]) -> str:
    head, value = match.groups()
    return head + MASK if _value_is_secret(head, value) else match.group()


def _mask_properties(match: re.Match[str]) -> str:
    head, quote, value, close = match.groups()
    name = head.rstrip(" \t=:")
    if not _value_is_secret(name, value):
        return match.group()
    return f"{head}{quote}{MASK}{close}"


def _mask_token_user(match: re.Match[str]) -> str:
    scheme, user, at = match.groups()
    looks_like_token = any(c.isdigit() for c in user) and any(c.isalpha() for c in user)
    return scheme + MASK + at if looks_like_token or len(user) >= 24 else match.group()


def _tokens(text: str) -> str:
    for token_re in _TOKEN_PATTERNS:
        text = token_re.sub(lambda m: m.group(1) + MASK, text)
    return text


def _jwt(text: str) -> str:
    return _JWT_RE.sub(MASK, text) if "eyJ" in text else text


def _headers(text: str) -> str:
    text = _AUTH_HEADER_RE.sub(_mask_header, text)
    return _KEY_HEADER_RE.sub(_mask_header, text)


def _url_credentials(text: str) -> str:
    if "://" not in text:
        return text
    text = _URL_PASSWORD_RE.sub(lambda m: m.group(1) + MASK + m.group(3), text)
    return _URL_TOKEN_USER_RE.sub(_mask_token_user, text)


def _query(text: str) -> str:
    return _QUERY_SECRET_RE.sub(_mask_query, text) if "=" in text else text


def _env(text: str) -> str:
    return _ENV_ASSIGN_RE.sub(_mask_env, text)


def _json(text: str) -> str:
    return _JSON_FIELD_RE.sub(_mask_json, text) if '"' in text else text


def _properties(text: str) -> str:
    if ":" in text:
        text = _YAML_FIELD_RE.sub(_mask_yaml, text)
    if "=" in text or ":" in text:
        text = _PROPERTIES_RE.sub(_mask_properties, text)
    return text


# A secret-named field in any spelling: a prefix (``raw_``, ``db``, ``app.api.``,
# camelCase), one secret word, and at most a ``key``/``value`` tail, so
# ``stripeSecretKey`` and ``app.api.key`` match while ``password_hint``,
# ``max_tokens`` and ``secretary`` do not.
_STRONG_WORDS = (
    r"password|passwd|passphrase|secret|api[._-]?key|apikey|private[._-]?key|access[._-]?key"
    r"|signing[._-]?key|credentials?"
)
_GENERIC_NAME = r"[\w.-]{0,64}?(?:(" + _STRONG_WORDS + r")|token)(?:[._-]?(?:key|value|string))?"
_GENERIC_JSON_RE = re.compile(
    r'(?i)("' + _GENERIC_NAME + r'"\s*:\s*")((?:[^"\\\n]|\\.){1,8000})(")'
)
_GENERIC_LINE_RE = re.compile(
    r"(?im)^([ \t]{0,64}(?:-[ \t]+|export[ \t]+)?[\"']?"
    + _GENERIC_NAME
    + r"[\"']?[ \t]*[=:][ \t]*)([\"']?)([^\s\"'#;][^\n\"']{0,4000}?)(\3)[ \t]*$"
)
_CLI_SECRET_RE = re.compile(
    r"(?i)(?<![\w-])(--(?:[a-z0-9]+[-_.]){0,4}?(?:(" + _STRONG_WORDS + r")|token|auth[-_]token)"
    r"(?:[-_.]?(?:key|value|token))?(?:=|[ \t]+))(\"[^\"\n]{1,4000}\"|'[^'\n]{1,4000}'|[^\s\"'-][^\s]{0,4000})"
)
# <password>x</password>, <apiKey>x</apiKey>: XML and HTML-ish config
_XML_SECRET_RE = re.compile(
    r"(?i)(<([\w.-]{0,64}?(?:(" + _STRONG_WORDS + r")|token)(?:[._-]?(?:key|value|string))?)>)"
    r"([^<\n]{1,4000})(</\2>)"
)
_NETRC_CONTEXT_RE = re.compile(
    r"(?im)^[ \t]*(?:machine[ \t]+(?:localhost|[\w-]{1,63}(?:\.[\w-]{1,63}){1,8})"
    r"|default[ \t]+login)\b"
)
_NETRC_PASSWORD_RE = re.compile(
    r"(?im)^((?:[ \t]*(?:machine|default)\b[^\n]{0,400}?[ \t])?[ \t]*(?:password|account)[ \t]+)"
    r"(\"[^\"\n]{1,400}\"|'[^'\n]{1,400}'|\S{1,400})"
)


def _strong_value(value: str) -> bool:
    """A value behind a strong secret name (password, secret, api key): any
    word of four characters or more that is not a placeholder, code or path."""
    value = value.strip().strip("\"'")
    if len(value) < 4 or _is_placeholder(value) or value == MASK:
        return False
    return not (_CODE_VALUE_RE.search(value) or value.startswith(("/", "~/", "./", "../")))


def _generic_ok(strong: str | None, name: str, value: str) -> bool:
    return _strong_value(value) if strong else _value_is_secret(name, value)


def _mask_generic_json(match: re.Match[str]) -> str:
    head, strong, value, close = match.groups()
    if not _generic_ok(strong, head, value):
        return match.group()
    return f"{head}{MASK}{close}"


def _mask_generic_line(match: re.Match[str]) -> str:
    head, strong, quote, value, close = match.groups()
    if not _generic_ok(strong, head.strip(" \t=:\"'-"), value):
        return match.group()
    return f"{head}{quote}{MASK}{close}"


def _mask_cli(match: re.Match[str]) -> str:
    head, strong, value = match.groups()
    if not _generic_ok(strong, head, value):
        return match.group()
    return head + MASK


def _mask_xml(match: re.Match[str]) -> str:
    head, tag, strong, value, close = match.groups()
    if not _generic_ok(strong, tag, value):
        return match.group()
    return f"{head}{MASK}{close}"


def _secret_fields(text: str) -> str:
    if '"' in text:
        text = _GENERIC_JSON_RE.sub(_mask_generic_json, text)
    if "=" in text or ":" in text:
        text = _GENERIC_LINE_RE.sub(_mask_generic_line, text)
    if "--" in text:
        text = _CLI_SECRET_RE.sub(_mask_cli, text)
    if "</" in text:
        text = _XML_SECRET_RE.sub(_mask_xml, text)
    return text


def _netrc(text: str) -> str:
    """``machine host login me password x``: .netrc entries, one line or many."""
    if ("password" not in text and "account" not in text) or not _NETRC_CONTEXT_RE.search(text):
        return text

    def mask(match: re.Match[str]) -> str:
        head, value = match.groups()
        return match.group() if value == MASK or _is_placeholder(value) else head + MASK

    return _NETRC_PASSWORD_RE.sub(mask, text)


# Named rules, applied in this order (`redaction_rules` reports which fired).
RULES: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("private_key", _redact_pem),
    ("vendor_token", _tokens),
    ("jwt", _jwt),
    ("url_credentials", _url_credentials),
    ("auth_header", _headers),
    ("query_secret", _query),
    ("env_assignment", _env),
    ("json_field", _json),
    ("properties_secret", _properties),
    ("secret_field", _secret_fields),
    ("netrc_password", _netrc),
)


def _known_values(text: str, extra_secrets: Iterable[str]) -> str:
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
    return text


def redact(text: str, *, extra_secrets: Iterable[str] = ()) -> str:
    """text with every secret it contains replaced by ``[REDACTED]``."""
    if not text:
        return text
    text = _known_values(text, extra_secrets)
    for _, rule in RULES:
        text = rule(text)
    return text


def redaction_rules(text: str, *, extra_secrets: Iterable[str] = ()) -> tuple[str, ...]:
    """The names of the rules that would mask something in text, in the
    order they apply (``known_value`` for registered or extra values)."""
    fired: list[str] = []
    if not text:
        return ()
    masked = _known_values(text, extra_secrets)
    if masked != text:
        fired.append("known_value")
    for name, rule in RULES:
        after = rule(masked)
        if after != masked:
            fired.append(name)
        masked = after
    return tuple(fired)


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
