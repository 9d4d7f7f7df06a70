"""The injection scanner's rules: each has an id, a category and a reason
(why the match is a problem), and finds the span of the first match in the
cleaned text. `SCAN_RULES` maps every id to its reason.

Every pattern is anchored on a literal or a word and has bounded
quantifiers; rules that need a window (``verb … target``) search from the
anchors, so a pass over 100 KB stays linear.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from types import MappingProxyType

from herald.safety.commands import check_command
from herald.safety.redaction import redact, secret_kinds

Span = tuple[int, int]
_MAX_ANCHORS = 5000
_I = re.I


@dataclass(frozen=True)
class ScanRule:
    """find(text) returns the span of the first match or None; needles are
    lower-case strings of which the text must contain one for the rule to
    run at all (a cheap filter ahead of the regular expressions)."""

    id: str
    category: str
    reason: str
    find: Callable[[str], Span | None]
    needles: tuple[str, ...] = ()


def _regex(pattern: str, flags: int = _I) -> Callable[[str], Span | None]:
    compiled = re.compile(pattern, flags)

    def find(text: str) -> Span | None:
        m = compiled.search(text)
        return m.span() if m else None

    return find


def _window_start(text: str, pos: int, window: int) -> int:
    """Start of the window of at most window chars before pos on its line."""
    low = max(0, pos - window)
    return text.rfind("\n", low, pos) + 1 or low


def _before(
    anchor: str, before: str, window: int, after: str | None = None
) -> Callable[[str], Span | None]:
    """anchor preceded on its line, within window chars, by before (and,
    when given, followed on its line by after). Both lists of matches are
    found once and merged, so the cost stays linear in the text length."""
    anchor_re, before_re = re.compile(anchor, _I), re.compile(before, _I)
    after_re = re.compile(after, _I) if after else None

    def find(text: str) -> Span | None:
        anchors = [m.span() for m in islice(anchor_re.finditer(text), _MAX_ANCHORS)]
        if not anchors:
            return None
        befores = [m.span() for m in before_re.finditer(text)]
        starts = [b for b, _ in befores]
        afters = [m.span() for m in after_re.finditer(text)] if after_re is not None else []
        after_starts = [a for a, _ in afters]
        for a_start, a_end in anchors:
            low = _window_start(text, a_start, window)
            i = bisect.bisect_left(starts, low)
            if i >= len(befores) or befores[i][1] > a_start:
                continue
            end = a_end
            if after_re is not None:
                k = bisect.bisect_left(after_starts, a_end)
                if k >= len(afters) or afters[k][1] > a_end + 400:
                    continue
                if "\n" in text[a_end : afters[k][0]]:
                    continue
                end = afters[k][1]
            return befores[i][0], end
        return None

    return find


# -- instruction overrides ------------------------------------------------------------

_IGNORE = (
    r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:(?:all|any|the|your|my|these|those"
    r"|every|of|prior)\s+){0,3}(?:previous|prior|above|earlier|preceding|former|original|initial"
    r"|system|safety|existing|developer)\s+(?:\w+\s+)?(?:instructions?|prompts?|rules|directives"
    r"|guidelines|guardrails|constraints|restrictions|messages|context|programming|policies)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:all|any|your)\s+(?:(?:the|of|prior|previous|your)\s+)?"
    r"(?:instructions|rules|directives|guardrails|guidelines|restrictions)\b"
)
_JAILBREAK = (
    r"\byou\s+are\s+(?:now\s+|no\s+longer\s+)(?:in\s+)?(?:DAN\b|jailbr\w*|unrestricted|unfiltered"
    r"|uncensored|(?:in\s+)?developer\s+mode|god\s+mode|free\s+(?:from|of)\s+(?:all\s+)?(?:rules"
    r"|restrictions|guidelines|constraints)|(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|evil"
    r"|rogue|jailbroken)\s+\w+|bound\s+by|restricted\s+by|required\s+to\s+follow)"
    r"|\b(?:act|behave|pretend|respond)\s+(?:as\s+if|like|that)\s+you\s+(?:have|had)\s+no\s+"
    r"(?:restrictions|rules|filters|guidelines|limits|safety)"
)
_NEW_INSTRUCTIONS = (
    r"\b(?:new|updated|revised|real|actual|true|hidden|secret)\s+(?:system\s+)?instructions\s*:"
    r"|\bsystem\s+prompt\s*(?:override|update)\b"
    r"|\b(?:new|updated|revised|replacement)\s+system\s+prompt\b"
    r"|\bforget\s+(?:everything|all|anything)(?:\s+(?:of\s+)?(?:the\s+)?(?:above|before|prior"
    r"|previous|earlier|you(?:'ve|\s+have|\s+were)\s+(?:been\s+)?(?:told|given|learned)))"
    r"|\byour\s+(?:new|real|actual|true|only|primary)\s+(?:instructions|task|goal|mission"
    r"|purpose|directive|role|job|objective)\s+(?:is|are|will\s+be)\b"
    r"|\bfrom\s+now\s+on,?\s+(?:you\s+(?:will|must|shall|are\s+to|should|obey)|ignore|always\s+"
    r"(?:obey|run|execute|comply))"
    r"|\bdisregard\s+(?:what|everything|anything)\s+(?:you\s+(?:were|have\s+been)\s+told"
    r"|(?:was\s+)?said\s+(?:before|above|earlier))"
)
_REVEAL = (
    r"\b(?:reveal|print|show|leak|repeat|output)\s+(?:your|the)\s+(?:full\s+)?(?:system\s+prompt"
    r"|hidden\s+(?:prompt|instructions)|initial\s+instructions)\b"
)
_PEOPLE = r"(?:user|owner|human|operator)"
_SECRECY = (
    r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|warn)\s+(?:the\s+)?"
    + _PEOPLE
    + r"\b"
    r"|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?" + _PEOPLE + r"\b"
    r"|\b(?:keep|hide)\s+(?:this|it)\s+(?:secret\s+)?from\s+(?:the\s+)?(?:user|owner|human)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|report|admit)\b[^.\n]{0,60}?"
    r"\b(?:to\s+)?(?:the\s+)?(?:user|owner|human|operator|anyone)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+let\s+(?:the\s+)?(?:user|owner|human)\s+(?:know|see|notice"
    r"|find\s+out)\b"
    r"|\bkeep\s+(?:this|it|that)\s+(?:a\s+secret\s+|secret\s+|quiet\s+|hidden\s+)?between\s+us\b"
    r"|\bwithout\s+(?:the\s+)?(?:user|owner|human)\s+(?:noticing|knowing|seeing|finding\s+out)\b"
)
_BANNER = (
    r"\b(?i:system|admin|developer|root|security|god|jailbreak|dan|emergency)\s+(?i:override)\b"
    r"|\b(?:SYSTEM|ADMIN|ROOT|DEVELOPER|DEBUG|MAINTENANCE|GOD|EMERGENCY|SECURITY|JAILBREAK|DAN)\s+"
    r"(?:MODE|MESSAGE|NOTICE|INSTRUCTIONS?|PROMPT|COMMAND|ALERT|UPDATE|ACCESS)\b"
    r"|\b(?i:admin|god|developer|jailbreak|maintenance|debug)\s+(?i:mode)\s*(?::|(?i:enabled"
    r"|activated|engaged)\b)"
)
_PRE_APPROVAL = (
    r"\b(?:user|owner|admin|administrator|operator|human|boss|i|we)\s+(?:has\s+|have\s+|had\s+)?"
    r"(?:already\s+)?(?:pre-?approved|pre-?authori[sz]ed|approved|authori[sz]ed|allowed|okayed"
    r"|consented\s+to|granted\s+(?:permission|approval)\s+for)\s+(?:all|every|any|each)\b"
    r"|\b(?:you\s+)?(?:do\s+not|don'?t|never|no\s+need\s+to|needn'?t)\s+(?:need\s+to\s+)?"
    r"(?:ask|request|wait)\s+(?:for\s+)?(?:(?:my|the\s+user'?s?|any|their)\s+)?(?:approval"
    r"|permission|confirmation|consent)\b"
    r"|\b(?:approval|permission|consent|authori[sz]ation)\s+(?:is|was|(?:has|have)(?:\s+already)?\s+been)\s+"
    r"(?:already\s+)?(?:granted|given)\b"
    r"|\bauto-?approve\s+(?:all|every|any|each)\b"
)
_ENCODED = (
    r"\b(?:decode|decipher|decrypt|unscramble|de-?obfuscate|unhex|reverse)\b[^.\n]{0,80}?"
    r"\b(?:and|then)\s+(?:follow|execute|run|obey|do|carry\s+out|act\s+on|apply|perform)\b"
    r"|\b(?:apply|follow|execute|obey|run)\s+(?:the\s+)?(?:rot-?13|base-?64|hex|encoded|decoded"
    r"|encrypted|obfuscated)\b[^.\n]{0,60}?\b(?:instructions|commands)\b"
)
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


def _remote_instructions(text: str) -> Span | None:
    """fetch … URL … and execute whatever it returns: a verb that fetches, a
    URL, then an order to act on the result, within one sentence."""
    obeys = [m.span() for m in islice(_OBEY_RE.finditer(text), _MAX_ANCHORS)]
    if not obeys:
        return None
    urls = [m.span() for m in islice(_URLISH_RE.finditer(text), _MAX_ANCHORS * 4)]
    fetches = [m.span() for m in islice(_FETCH_RE.finditer(text), _MAX_ANCHORS * 4)]
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


_ROLE_MARKER = (
    r"<\|(?:im_start|im_end|system|endoftext|start_header_id|eot_id)\|>|\[/?INST\]|<<SYS>>"
    r"|</?(?:system|system_prompt|instructions)>|\[SYSTEM\]|^#{1,4}\s*system\s*(?:prompt|message)?\s*:"
)

# -- exfiltration ----------------------------------------------------------------------

_SECRET_NOUN_RE = re.compile(
    r"\b(?:secrets?|api[\s_-]?keys?|access\s+keys?|tokens?|credentials?|passwords?|passphrases?"
    r"|private\s+keys?|ssh\s+keys?|env(?:ironment)?\s+var(?:iable)?s?|id_rsa|id_ed25519|cookies?"
    r"|keychain|wallet|seed\s+phrase|memories|memory\s+files?|conversation\s+history|chat\s+(?:history"
    r"|logs?)|state\.db|(?:MEMORY|USER|SOUL)\.md)\b|\.env\b|~/\.ssh\b|\.aws/credentials\b"
    r"|~/\.herald\b",
    _I,
)
# "the webhook in my .env", "the token from .env": where a setting lives, not what is sent
_LOCATION_BEFORE_RE = re.compile(
    r"\b(?:in|from|inside|stored\s+in|saved\s+in|listed\s+in|using)\s+(?:(?:my|the|our|your)\s+)?$",
    _I,
)
_DESTINATION_RE = re.compile(
    r"https?://|\bwebhook\b|@(?<=[\w.+-]@)[\w-]{1,63}\.[a-z]{2,24}\b|\bpastebin\b|\bngrok\b"
    r"|\bto\s+(?:this|my|our|the\s+following|an?\s+external)\s+(?:server|endpoint|url|address"
    r"|host|e-?mail|inbox)\b",
    _I,
)
_SEND_VERB_RE = re.compile(
    r"\b(?:send|post|upload|forward|exfiltrate|transmit|leak|copy|e-?mail|share|submit|paste"
    r"|beam|dump)\b",
    _I,
)


def _spans(pattern: re.Pattern[str], text: str) -> list[Span]:
    return [m.span() for m in pattern.finditer(text)]


def _prose_exfiltration(text: str) -> Span | None:
    """verb … secret … destination (or verb … destination … secret) on one line,
    found by merging the three match lists (linear in the text length)."""
    dests = _spans(_DESTINATION_RE, text)
    if not dests:
        return None
    verbs = _spans(_SEND_VERB_RE, text)
    secrets = [
        (s, e)
        for s, e in _spans(_SECRET_NOUN_RE, text)
        if not _LOCATION_BEFORE_RE.search(text, max(0, s - 30), s)
    ]
    if not verbs or not secrets:
        return None
    verb_ends = [e for _, e in verbs]
    dest_starts = [s for s, _ in dests]
    for s_start, s_end in secrets[:_MAX_ANCHORS]:
        line = _window_start(text, s_start, 200)
        i = bisect.bisect_right(verb_ends, s_start) - 1
        if i < 0 or verb_ends[i] < max(line, s_start - 120):
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
    command may follow a prompt or a label: each command word is tried)."""
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


def _command_exfiltration(text: str) -> Span | None:
    return _command_lines(text, (_UPLOAD_WORD_RE, _SECRET_FILE_RE), "dangerous.exfiltration")


def _pipe_to_shell(text: str) -> Span | None:
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


def _secret_variable(text: str) -> Span | None:
    """A secret environment variable sent to a host that is not its vendor's
    (``curl -H "Authorization: Bearer $OPENAI_API_KEY" https://elsewhere``),
    judged once per line that holds one."""
    offset = 0
    for line in text.split("\n"):
        start, offset = offset, offset + len(line) + 1
        if "$" not in line or not _SENDERS_RE.search(line):
            continue
        names = {m.group(1) for m in islice(_SECRET_VAR_RE.finditer(line), _MAX_ANCHORS)}
        if not names:
            continue
        hosts = set(islice(_URL_HOST_RE.findall(line), _MAX_ANCHORS))
        if any(not _vendor_host(name, host) for name in names for host in hosts):
            return start, start + len(line)
    return None


_FORWARD = (
    r"\b(?:forward|relay|bcc|cc|copy|mirror|send|redirect)\s+(?:all|every|each|any)\s+"
    r"(?:of\s+(?:my|the|your)\s+)?(?:incoming\s+|new\s+|future\s+|received\s+)?(?:messages?"
    r"|e-?mails?|conversations?|chats?|dms?|replies|reply|notifications?|texts?|sms)\b[^.\n]{0,80}?"
    r"\bto\s+(?!me\b|my\b|myself\b|us\b|our\b|the\s+owner\b)"
)
_CREDENTIAL_DIRS = (
    r"(?:~|\$HOME|\$\{HOME\}|/home/\w+|/root)/"
    r"\.(?:aws|ssh|gnupg|kube|docker|config/gcloud|herald|password-store|netrc)\b"
)
_ARCHIVERS = r"\b(?:zip|tar|7z|7za|rar|cpio)\b"

# -- persistence --------------------------------------------------------------------------

_EDIT_VERBS = (
    r"\b(?:edit|modify|change|update|overwrite|rewrite|replace|append|prepend|add|insert|write"
    r"|delete|remove|wipe|clear)\b"
)
_AUTORUN_VERBS = (
    r"\b(?:edit|modify|change|update|overwrite|rewrite|replace|append|prepend|add|insert|write"
    r"|create|install|schedule|put|register|plant|echo|set\s+up)\b|>>|\btee\b"
)
_AGENT_SELF = (
    r"\byour\s+(?:own\s+)?(?:system\s+prompt|instructions|soul|config(?:uration)?|rules"
    r"|guidelines|safety\s+settings|approval\s+settings)\b|\bSOUL\.md\b|\bMEMORY\.md\b"
    r"|\bUSER\.md\b|~/\.herald\b|\$HERALD_HOME\b|\.herald/config\.yaml|\bherald\s+config\b"
)
_AUTORUN_TARGETS = (
    r"\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zshenv|zlogin|kshrc|cshrc"
    r"|tcshrc)\b|config\.fish\b|\bcrontab\b|\bcron\s*(?:job|tab|entry|entries)s?\b|/etc/cron"
    r"|\bcron\.d\b|@reboot\b|\bLaunch(?:Agents|Daemons)\b|\.config/autostart|\bsystemd\s+"
    r"(?:--user\s+)?(?:unit|service|timer)\b|\.git/hooks\b|\brc\.local\b"
)
_AGENT_FILES = r"\b(?:AGENTS|CLAUDE|GEMINI)\.md\b|\.cursorrules\b|copilot-instructions\.md\b"
_RUN_WORDS = r"\b(?:runs?|execute[sd]?|exec|curl|wget|sh|bash|source|starts?|launch(?:es)?)\b"
_APPROVALS_OFF = (
    r"\b(?:disable|turn\s+off|switch\s+off|bypass|deactivate)\s+(?:the\s+|all\s+|your\s+)?"
    r"(?:command\s+)?(?:approvals?|safety\s+(?:checks?|layer|guard)|guardrails|security\s+checks?)\b"
    r"|\bapprovals?\.mode\s*(?:[:=]|\s+to\b)\s*[\"']?(?:off|never|none|disabled?|false|yolo)\b"
    r"|\bherald\s+config\s+set\s+approvals|\bapprovals\s*:\s*\n?\s{0,8}mode\s*:\s*[\"']?off\b"
    r"|\byolo\s+mode\b|--yolo\b|--dangerously-skip-permissions\b"
)
_SUDOERS = r"/etc/sudoers(?:\.d)?\b|\bvisudo\b|\bsudoers\b"
_SUDOERS_VERBS = (
    r"\b(?:edit|modify|change|add|append|write|insert|echo|run|open|update)\b|>>|\btee\b"
)
_NOPASSWD = r"\bNOPASSWD\s*:?\s*ALL\b|\bALL\s*=\s*\(ALL(?::ALL)?\)\s*NOPASSWD\b"
_WIPE_MEMORY = (
    r"\b(?:delete|wipe|erase|clear|purge|remove|destroy|forget|reset|drop)\s+(?:all\s+(?:of\s+)?)?"
    r"(?:your|the|my|its|herald'?s?|all)\s+(?:own\s+)?(?:memor(?:y|ies)|notes|history|sessions"
    r"|skills|state(?:\.db)?|conversation\s+history|chat\s+history|learned\s+facts|knowledge)\b"
    r"|\b(?:rm|shred|truncate|unlink|rmdir)\b[^\n]{0,80}?(?:\.herald\b|\$HERALD_HOME|MEMORY\.md"
    r"|USER\.md|state\.db|SOUL\.md)"
)

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


def _plain_password(text: str) -> Span | None:
    for count, m in enumerate(_PASSWORD_RE.finditer(text)):
        if count >= _MAX_ANCHORS:
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


def _credential(text: str) -> Span | None:
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


def _html_comment(text: str) -> Span | None:
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


def _hidden_css(text: str) -> Span | None:
    for count, m in enumerate(_STYLE_RE.finditer(text)):
        if count >= _MAX_ANCHORS:
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


# -- the table ----------------------------------------------------------------------------

_AUTORUN_FIND = _before(_AUTORUN_TARGETS, _AUTORUN_VERBS, 120)
_AGENT_FILE_FIND = _before(_AGENT_FILES, _AUTORUN_VERBS, 120, _RUN_WORDS)
_NOPASSWD_FIND = _regex(_NOPASSWD, 0)
_SUDOERS_FIND = _before(_SUDOERS, _SUDOERS_VERBS, 80)

_TABLE: tuple[ScanRule, ...] = (
    ScanRule("override.ignore_instructions", "instruction_override",
             "tells the model to ignore the instructions it was given", _regex(_IGNORE)),
    ScanRule("override.jailbreak", "instruction_override",
             "tries to switch the model into an unrestricted persona", _regex(_JAILBREAK)),
    ScanRule("override.new_instructions", "instruction_override",
             "replaces the model's instructions with new ones", _regex(_NEW_INSTRUCTIONS)),
    ScanRule("override.reveal_prompt", "instruction_override",
             "asks the model to reveal its system prompt", _regex(_REVEAL)),
    ScanRule("override.secrecy", "instruction_override",
             "asks the model to hide what it does from its owner", _regex(_SECRECY)),
    ScanRule("override.banner", "instruction_override",
             "a fake system or admin banner claiming authority over the model", _regex(_BANNER, 0)),
    ScanRule("override.pre_approval", "instruction_override",
             "claims that dangerous actions were approved in advance", _regex(_PRE_APPROVAL)),
    ScanRule("override.encoded", "instruction_override",
             "asks the model to decode hidden text and act on it", _regex(_ENCODED)),
    ScanRule("override.remote_instructions", "instruction_override",
             "takes orders from a remote URL (command-and-control)", _remote_instructions),
    ScanRule("marker.chat_template", "role_marker",
             "a chat-template or role marker that can pose as conversation structure",
             _regex(_ROLE_MARKER, re.I | re.M)),
    ScanRule("exfiltration.prose", "exfiltration",
             "asks to send secrets, keys or Herald's memory and state to an outside destination",
             _prose_exfiltration),
    ScanRule("exfiltration.command", "exfiltration",
             "a command that uploads secret files or the environment", _command_exfiltration),
    ScanRule("exfiltration.secret_variable", "exfiltration",
             "sends a secret environment variable to a host that is not its service's",
             _secret_variable),
    ScanRule("exfiltration.archive_secrets", "exfiltration",
             "packs credential directories (~/.ssh, ~/.aws, ~/.herald …) into an archive",
             _before(_CREDENTIAL_DIRS, _ARCHIVERS, 200)),
    ScanRule("exfiltration.forward_messages", "exfiltration",
             "forwards the owner's messages to a third party", _regex(_FORWARD)),
    ScanRule("persistence.authorized_keys", "persistence",
             "adds an SSH key that would let someone log in",
             _before(r"authorized_keys2?\b", r">>?|\btee\b|\b(?:add|append|write|insert|put|copy"
                     r"|install|echo|plant)\b", 100)),
    ScanRule("persistence.agent_files", "persistence",
             "rewrites Herald's own instructions, memory or configuration",
             _before(_AGENT_SELF, _EDIT_VERBS, 60)),
    ScanRule("persistence.autorun", "persistence",
             "makes something run automatically (shell startup files, cron, launch agents)",
             lambda t: _AUTORUN_FIND(t) or _AGENT_FILE_FIND(t)),
    ScanRule("persistence.sudoers", "persistence",
             "grants root without a password (sudoers)",
             lambda t: _NOPASSWD_FIND(t) or _SUDOERS_FIND(t)),
    ScanRule("persistence.approvals_off", "persistence",
             "turns Herald's command approvals or safety checks off", _regex(_APPROVALS_OFF)),
    ScanRule("persistence.wipe_memory", "persistence",
             "destroys Herald's memory, skills or history", _regex(_WIPE_MEMORY)),
    ScanRule("command.pipe_to_shell", "remote_code",
             "runs code downloaded from the network", _pipe_to_shell),
    ScanRule("hidden.html_comment", "hidden_text",
             "instructions for the model hidden in an HTML comment", _html_comment),
    ScanRule("hidden.css", "hidden_text",
             "text hidden from people with CSS (display:none, visibility:hidden, font-size:0)",
             _hidden_css),
    ScanRule("secret.credential", "secret", "a real-looking key, token or private key",
             _credential),
    ScanRule("secret.password", "secret", "a password written out in plain text",
             _plain_password),
)  # fmt: skip

# A rule runs only when the lower-cased text holds one of its needles.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "override.ignore_instructions": ("ignore", "disregard", "forget", "override", "bypass", "skip"),
    "override.jailbreak": ("you", "act", "behave", "pretend", "respond"),
    "override.new_instructions": ("instructions", "prompt", "forget", "your", "now", "disregard"),
    "override.reveal_prompt": ("prompt", "instructions"),
    "override.secrecy": ("tell", "inform", "notify", "alert", "warn", "without", "keep", "hide",
                         "mention", "reveal", "disclose", "report", "admit", "let"),
    "override.banner": ("override", "mode", "message", "notice", "instruction", "prompt",
                        "command", "alert", "update", "access"),
    "override.pre_approval": ("approv", "authori", "allowed", "okayed", "consent", "granted",
                              "permission", "confirmation"),
    "override.encoded": ("decode", "decipher", "decrypt", "unscramble", "obfuscat", "unhex",
                         "reverse", "rot", "base", "hex", "encoded", "encrypted"),
    "override.remote_instructions": ("http", "url"),
    "marker.chat_template": ("<|", "inst]", "<<sys", "system", "instructions"),
    "exfiltration.command": ("curl", "wget", "nc", "http", "xh", "scp", "rsync", "socat"),
    "exfiltration.secret_variable": ("$",),
    "exfiltration.archive_secrets": ("zip", "tar", "7z", "rar", "cpio"),
    "exfiltration.forward_messages": ("forward", "relay", "bcc", "cc", "copy", "mirror", "send",
                                      "redirect"),
    "persistence.authorized_keys": ("authorized_keys",),
    "persistence.agent_files": ("your", "soul.md", "memory.md", "user.md", ".herald",
                                "herald_home", "herald config"),
    "persistence.autorun": ("bashrc", "zshrc", "kshrc", "cshrc", "profile", "zshenv", "zlogin",
                            "bash_login", "fish", "cron", "rc.local", "@reboot", "launch", "autostart",
                            "systemd", "hooks", "agents.md", "claude.md", "gemini.md",
                            ".cursorrules", "copilot"),
    "persistence.sudoers": ("sudoers", "visudo", "nopasswd"),
    "persistence.approvals_off": ("approval", "safety", "guardrail", "security", "yolo",
                                  "dangerously"),
    "persistence.wipe_memory": ("memor", "notes", "history", "session", "skill", "state",
                                "knowledge", "learned", ".herald", "herald_home", "soul.md"),
    "command.pipe_to_shell": ("|", "<(", "eval"),
    "hidden.html_comment": ("<!--",),
    "hidden.css": ("style",),
    "secret.password": ("pass", "pin", "pw"),
}  # fmt: skip
RULES: tuple[ScanRule, ...] = tuple(
    dataclasses.replace(rule, needles=_NEEDLES.get(rule.id, ())) for rule in _TABLE
)

INVISIBLE_RULES = MappingProxyType({
    "invisible.bidi": "bidirectional control characters that reorder what people see",
    "invisible.tags": "Unicode tag characters (ASCII hidden from people)",
    "invisible.zero_width": "zero-width characters that hide or split words",
})  # fmt: skip

SCAN_RULES: MappingProxyType[str, str] = MappingProxyType(
    {**{r.id: r.reason for r in RULES}, **INVISIBLE_RULES}
)
