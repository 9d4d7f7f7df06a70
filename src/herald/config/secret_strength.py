"""The one rule for secrets that guard a served entrance (issue 41).

An API key, a webhook HMAC secret or the MCP bearer token lets whoever holds it run
turns with terminal tools on the owner's machine, so a guessable one is remote code
execution for anyone who can reach the port. Loopback binds are not exempt: any local
process or user, or a browser page via DNS rebinding, can reach 127.0.0.1.

`secret_problem(value)` says why a value is not good enough (None when it is):

- it must carry about 128 bits: its length times the bits per character of the
  character classes it uses reaches 128 (32 hex characters or 24 url-safe base64
  characters do; 20 characters is the least that can), and what is left after taking
  out placeholder words, keyboard and alphabet runs and repeated patterns still
  reaches 112 (random text loses a few characters to chance);
- it must not be a known placeholder (``changeme``, ``your-api-key``, ``sk-...``,
  ``<a long random string>``, the examples in Herald's README) nor use few
  different characters.

`entrance_secret_problem` adds the last part of the rule: no two entrances share a
secret, so one leaked key never opens a second door.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from herald.config.loader import ConfigError
from herald.config.schema import HeraldConfig
from herald.config.secrets import (
    SECRET_REF_RE,
    MissingSecretError,
    Secrets,
    resolve_secret_ref,
)

MIN_BITS = 128
# What is left after the predictable parts are taken out may fall this far short of
# MIN_BITS: random text has the odd "lkjh" or "7777" by chance (a 32-hex-character
# key would otherwise be refused about once in 4,000), while a made-up key loses far more.
_CHANCE_BITS = 16
# Only the first this-many characters are analysed (the regexes below backtrack); a
# longer value is judged on its prefix, which is plenty for 128 bits.
_MAX_ANALYSED = 512

# Words that mark a value someone typed or copied instead of generating. Matched
# case-insensitively and removed before counting; none shorter than three letters,
# so random strings almost never lose characters to them by chance.
PLACEHOLDER_WORDS = (
    "changeme",
    "change",
    "replace",
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api",
    "key",
    "your",
    "test",
    "example",
    "sample",
    "dummy",
    "placeholder",
    "default",
    "admin",
    "root",
    "herald",
    "webhook",
    "whsec",
    "bearer",
    "letmein",
    "welcome",
    "hunter",
    "foo",
    "bar",
    "baz",
    "qux",
    "todo",
    "fixme",
    "insert",
    "here",
    "random",
    "string",
    "long",
    "super",
    "local",
    "dev",
    "prod",
    "xxx",
    "deadbeef",
    "mcp",
)

# Whole values (lower-cased, punctuation and digits kept) known from docs and habits.
# The README/docs examples are here so copying one is caught even though their
# words would be caught anyway.
KNOWN_PLACEHOLDERS = frozenset(
    {
        "changeme",
        "change-me",
        "secret",
        "password",
        "your-api-key",
        "your_api_key",
        "test",
        "bar-secret",
        "<a long random string>",
        "<token>",
        "<api_key>",
        "<your-api-key>",
        "none",
        "null",
        "undefined",
    }
)

# Keyboard rows and sequences: a step between neighbours in one of these (either
# direction) is predictable.
_SEQUENCES = (
    "`1234567890-=",
    "qwertyuiop[]\\",
    "asdfghjkl;'",
    "zxcvbnm,./",
    "abcdefghijklmnopqrstuvwxyz",
    "0123456789",
    "!@#$%^&*()_+",
    # keyboard columns, for walks such as "1qaz2wsx3edc"
    "1qaz",
    "2wsx",
    "3edc",
    "4rfv",
    "5tgb",
    "6yhn",
    "7ujm",
    "8ik,",
    "9ol.",
    "0p;/",
)
# (a, b) -> the (row, direction) steps it can be; a run continues only in the same one.
_STEPS: dict[tuple[str, str], set[tuple[int, int]]] = {}
for _row_index, _row in enumerate(_SEQUENCES):
    for _a, _b in itertools.pairwise(_row):
        _STEPS.setdefault((_a, _b), set()).add((_row_index, 1))
        _STEPS.setdefault((_b, _a), set()).add((_row_index, -1))
_RUN_CHARS = 4  # "abc" happens by chance in random text; "abcd" hardly ever
# Short words only count standing alone ("-key-"), long ones anywhere, in the case
# forms people type (test, TEST, Test), so random text almost never loses characters.
_WORD_FORMS = sorted(
    {form for w in PLACEHOLDER_WORDS for form in (w, w.upper(), w.capitalize())},
    key=len,
    reverse=True,
)
_WORDS_RE = re.compile(
    "|".join(
        re.escape(w) if len(w) > 3 else rf"(?<![A-Za-z]){re.escape(w)}(?![A-Za-z])"
        for w in _WORD_FORMS
    )
)
_REPEATED_UNIT_RE = re.compile(r"(.{2,}?)\1+", re.S)
_REPEATED_CHAR_RE = re.compile(r"(.)\1{2,}", re.S)
# "sk-...", "<your key>", "{{ token }}": a template that was never filled in.
_ELLIPSIS_RE = re.compile(r"\.\.\.|…|<[A-Za-z][A-Za-z _-]*>|\{\{\s*\w+\s*\}\}")


def _class_pool(text: str) -> int:
    """How many characters the classes present in `text` offer."""
    pool = 0
    if any(c.islower() for c in text):
        pool += 26
    if any(c.isupper() for c in text):
        pool += 26
    if any(c.isdigit() for c in text):
        pool += 10
    if any(not c.isalnum() for c in text):
        pool += 33
    return pool


def _collapse_runs(text: str) -> tuple[str, int]:
    """`text` with every keyboard or alphabet run (``abcd``, ``4321``, ``qwer``) of
    `_RUN_CHARS` or more cut to its first character, and how many characters that removed."""
    out: list[str] = []
    removed = 0
    run = 1
    ways: set[tuple[int, int]] = set()
    for i, char in enumerate(text):
        step = _STEPS.get((text[i - 1].lower(), char.lower()), set()) if i else set()
        ways = (ways & step) if run > 1 else step
        run = run + 1 if ways else (2 if step else 1)
        if not ways:
            ways = step
        out.append(char)
        if run == _RUN_CHARS:  # the run became predictable: keep only its first character
            del out[1 - _RUN_CHARS :]
            removed += _RUN_CHARS - 1
        elif run > _RUN_CHARS:
            out.pop()
            removed += 1
    return "".join(out), removed


@dataclass(frozen=True)
class SecretAnalysis:
    length: int
    nominal_bits: float  # length times the bits per character of the classes used
    bits: float  # the same after the predictable parts are taken out
    words: int  # characters that were placeholder words
    runs: int  # characters in keyboard / alphabet runs
    repeats: int  # characters in repeated patterns
    distinct: int
    commonest_share: float


def analyse_secret(value: str) -> SecretAnalysis:
    text = value[:_MAX_ANALYSED]
    without_words = _WORDS_RE.sub("", text)
    words = len(text) - len(without_words)
    collapsed = _REPEATED_CHAR_RE.sub(r"\1", without_words)
    collapsed = _REPEATED_UNIT_RE.sub(r"\1", collapsed)
    repeats = len(without_words) - len(collapsed)
    effective, runs = _collapse_runs(collapsed)
    per_char = math.log2(_class_pool(effective) or 1)
    nominal = len(text) * math.log2(_class_pool(text) or 1)
    bits = len(effective) * per_char
    counts = Counter(text)
    share = max(counts.values()) / len(text) if text else 1.0
    return SecretAnalysis(len(value), nominal, bits, words, runs, repeats, len(counts), share)


def secret_problem(value: str | None) -> str | None:
    """Why `value` is not strong enough to guard an entrance, or None when it is."""
    if value is None or not value.strip():
        return "is empty"
    if value != value.strip():
        return "starts or ends with whitespace (a copy-paste slip?)"
    if value.lower() in KNOWN_PLACEHOLDERS or _ELLIPSIS_RE.search(value):
        short = f" (and {len(value)} characters is too short)" if len(value) < 20 else ""
        return f"is a placeholder, not a secret{short}"
    found = analyse_secret(value)
    if found.length < 20:
        return (
            f"is too short ({found.length} characters; a guessable key is remote code "
            "execution, so it needs about 128 random bits: 32 hex or 24 url-safe characters)"
        )
    if found.distinct < 8:
        return f"uses too few different characters ({found.distinct}) to be random"
    if found.commonest_share > 0.4:  # random hex reaches a third about once in 30,000
        return f"is {round(found.commonest_share * 100)}% one character, so not random"
    if found.nominal_bits >= MIN_BITS and found.bits >= MIN_BITS - _CHANCE_BITS:
        return None
    causes = []
    if found.words:
        causes.append("placeholder words")
    if found.runs:
        causes.append("keyboard or alphabet runs")
    if found.repeats:
        causes.append("repeated patterns")
    why = f" (it is mostly {', '.join(causes)})" if causes else ""
    return (
        f"is too predictable: about {int(min(found.bits, found.nominal_bits))} bits of "
        f"randomness, {MIN_BITS} needed{why}"
    )


# ---- entrances -------------------------------------------------------------------------


@dataclass(frozen=True)
class EntranceSecret:
    """One entrance's secret setting: the config key, the `.env` name `herald secrets
    new` suggests, and the `--for` word that wires it up."""

    setting: str
    env_name: str
    kind: str


API_KEY = EntranceSecret("gateway.platforms.api.api_key", "HERALD_API_KEY", "api")
WEBHOOK_SECRET = EntranceSecret(
    "gateway.platforms.webhook.secret", "HERALD_WEBHOOK_SECRET", "webhook"
)
MCP_TOKEN = EntranceSecret("mcp.serve.token_env", "HERALD_MCP_TOKEN", "mcp")
WEB_LOGIN = EntranceSecret("the web chat login token", "", "web")
ENTRANCE_SECRETS = {e.kind: e for e in (API_KEY, WEBHOOK_SECRET, MCP_TOKEN)}


def fix_hint(entrance: EntranceSecret, env_name: str | None = None, *, exists: bool = False) -> str:
    """The command that makes a good secret and wires it up (`--force` when `.env`
    already has one under that name)."""
    name = env_name or entrance.env_name
    force = " --force" if exists else ""
    return f"make a strong one with: herald secrets new {name} --for {entrance.kind}{force}"


def entrance_secret_problem(
    value: str | None,
    *,
    others: Mapping[str, str | None] = {},
    matches_hashed: Mapping[str, Callable[[str], bool]] = {},
) -> str | None:
    """`secret_problem`, plus reuse: `others` maps the other entrances' settings to their
    values; `matches_hashed` maps a setting to a check against a secret kept only as a
    hash (the web chat's login token)."""
    problem = secret_problem(value)
    if problem is not None or value is None:
        return problem
    for setting, other in others.items():
        if other is not None and other.strip() == value:
            return f"is reused with {setting}: one leaked key would open both"
    for setting, matches in matches_hashed.items():
        if matches(value):
            return f"is reused with {setting}: one leaked key would open both"
    return None


def is_loopback(host: str) -> bool:
    """Whether `host` binds only the loopback interface. Such a bind is no exemption
    from the rule above; it only decides whether plain HTTP crosses a network."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class WeakSecretError(ConfigError):
    """An entrance's secret fails the rule; the entrance does not start."""


def entrance_label(entrance: EntranceSecret, config: HeraldConfig) -> str:
    """How messages name the setting: the config key, or for the MCP token (whose
    config key holds a name) the secret's name and the key that names it."""
    if entrance is MCP_TOKEN:
        return f"{config.mcp.serve.token_env} (the secret mcp.serve.token_env names)"
    return entrance.setting


def _raw_setting(entrance: EntranceSecret, config: HeraldConfig) -> str | None:
    platforms = config.gateway.platforms
    if entrance is API_KEY:
        return platforms.api.api_key
    if entrance is WEBHOOK_SECRET:
        return platforms.webhook.secret
    return None


def entrance_env_name(entrance: EntranceSecret, config: HeraldConfig) -> str:
    """The `.env` name to suggest for a new value: the one the config already refers
    to when it does, else the usual one."""
    if entrance is MCP_TOKEN:
        return config.mcp.serve.token_env
    raw = _raw_setting(entrance, config)
    match = SECRET_REF_RE.fullmatch(raw.strip()) if raw else None
    return match.group(1) if match else entrance.env_name


def entrance_secret_value(
    entrance: EntranceSecret, config: HeraldConfig, secrets: Secrets
) -> str | None:
    """The entrance's secret as it would be served (``${VAR}`` resolved), or None when
    it is not set. Raises `MissingSecretError` for a reference to an unset secret."""
    if entrance is MCP_TOKEN:
        return secrets.get(config.mcp.serve.token_env)
    return resolve_secret_ref(
        _raw_setting(entrance, config), secrets, setting=entrance_label(entrance, config)
    )


def _other_values(
    entrance: EntranceSecret, config: HeraldConfig, secrets: Secrets
) -> dict[str, str | None]:
    others: dict[str, str | None] = {}
    for other in ENTRANCE_SECRETS.values():
        if other is entrance:
            continue
        try:
            others[entrance_label(other, config)] = entrance_secret_value(other, config, secrets)
        except MissingSecretError:
            continue  # that entrance cannot start anyway, and says so itself
    return others


def check_entrance(
    entrance: EntranceSecret,
    config: HeraldConfig,
    secrets: Secrets,
    *,
    matches_hashed: Mapping[str, Callable[[str], bool]] = {},
) -> str | None:
    """Why this entrance's configured secret fails the rule (reuse with every other
    entrance's secret included, enabled or not), or None when it passes. Unset is a
    problem too; a reference to an unset secret raises `MissingSecretError`."""
    value = entrance_secret_value(entrance, config, secrets)
    if value is None:
        return "is not set"
    return entrance_secret_problem(
        value, others=_other_values(entrance, config, secrets), matches_hashed=matches_hashed
    )


def require_entrance(
    entrance: EntranceSecret,
    config: HeraldConfig,
    secrets: Secrets,
    *,
    matches_hashed: Mapping[str, Callable[[str], bool]] = {},
) -> str:
    """The entrance's secret when it passes the rule; else `WeakSecretError` naming the
    setting, why, and the command that makes a good one. Loopback binds get no
    exemption: other local users and processes, and web pages through DNS rebinding,
    reach 127.0.0.1 too."""
    problem = check_entrance(entrance, config, secrets, matches_hashed=matches_hashed)
    value = entrance_secret_value(entrance, config, secrets)
    if problem is None and value is not None:
        return value
    env_name = entrance_env_name(entrance, config)
    raise WeakSecretError(
        f"refusing to serve: {entrance_label(entrance, config)} {problem}; "
        f"{fix_hint(entrance, env_name, exists=bool(secrets.get(env_name)))}"
    )


__all__ = [
    "API_KEY",
    "ENTRANCE_SECRETS",
    "KNOWN_PLACEHOLDERS",
    "MCP_TOKEN",
    "MIN_BITS",
    "PLACEHOLDER_WORDS",
    "WEBHOOK_SECRET",
    "WEB_LOGIN",
    "EntranceSecret",
    "SecretAnalysis",
    "WeakSecretError",
    "analyse_secret",
    "check_entrance",
    "entrance_env_name",
    "entrance_label",
    "entrance_secret_problem",
    "entrance_secret_value",
    "fix_hint",
    "is_loopback",
    "require_entrance",
    "secret_problem",
]
