"""`scan_text`: one injection scanner for every place that stores or injects
text (memory, context files, cron prompts, skills, webhooks).

It looks for five things:

* instruction override: "ignore previous instructions", "you are now DAN",
  "new system instructions:", "do not tell the user", fake chat-role markers;
* exfiltration: instructions or commands that send secrets or secret files
  to a URL, webhook or e-mail address;
* persistence: adding SSH keys to ``authorized_keys``, editing the agent's own
  instructions, memory or config, switching approvals off;
* hard-coded secrets (real-looking keys and tokens, not placeholders);
* invisible or bidirectional Unicode used to hide text.

Phrases are matched on a cleaned copy (NFKC, invisible characters removed),
so ``ig\u00adnore previous instructions`` is caught too. Patterns are specific
enough that ordinary notes pass: "Read AGENTS.md before editing", "You are now
on the main branch", "Post results to the #ops channel".
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

from herald.safety.commands import check_command
from herald.safety.redaction import redact, secret_kinds

SCAN_KINDS = frozenset({"memory", "context_file", "cron_prompt", "skill", "webhook"})

# Which categories block, per kind. Documentation (context files, skills) may
# legitimately show chat-template markers; webhook payloads often carry
# tokens, which are redacted downstream rather than refused.
_BLOCKING: dict[str, frozenset[str]] = {
    "memory": frozenset({"instruction_override", "role_marker", "exfiltration", "persistence",
                         "secret", "invisible_unicode"}),
    "cron_prompt": frozenset({"instruction_override", "role_marker", "exfiltration", "persistence",
                              "secret", "invisible_unicode"}),
    "webhook": frozenset({"instruction_override", "role_marker", "exfiltration", "persistence",
                          "invisible_unicode"}),
    "skill": frozenset({"instruction_override", "exfiltration", "persistence", "secret",
                        "invisible_unicode"}),
    "context_file": frozenset({"instruction_override", "exfiltration", "persistence", "secret",
                               "invisible_unicode"}),
}  # fmt: skip


@dataclass(frozen=True)
class ScanFinding:
    category: str  # instruction_override | role_marker | exfiltration | persistence | secret | invisible_unicode
    detail: str  # what matched (shortened), or a description


@dataclass(frozen=True)
class ScanResult:
    """blocked: the text must not be stored or injected; reasons: one line per
    blocking finding; findings: everything noticed, blocking or not."""

    blocked: bool
    reasons: tuple[str, ...]
    findings: tuple[ScanFinding, ...] = ()
    kind: str = ""


_I = re.I
_OVERRIDE_RE = re.compile(
    "|".join(
        f"(?:{p})"
        for p in (
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:(?:all|any|the|your|my|these|those"
            r"|every|of|prior)\s+){0,3}(?:previous|prior|above|earlier|preceding|former|original|initial"
            r"|system|safety|existing|developer)\s+(?:\w+\s+)?(?:instructions?|prompts?|rules|directives"
            r"|guidelines|guardrails|constraints|restrictions|messages|context|programming|policies)\b",
            r"\b(?:ignore|disregard|forget)\s+(?:all|any|your)\s+(?:(?:the|of|prior|previous|your)\s+)?"
            r"(?:instructions|rules|directives|guardrails|guidelines|restrictions)\b",
            r"\byou\s+are\s+(?:now\s+|no\s+longer\s+)(?:in\s+)?(?:DAN\b|jailbr\w*|unrestricted|unfiltered"
            r"|uncensored|(?:in\s+)?developer\s+mode|god\s+mode|free\s+(?:from|of)\s+(?:all\s+)?(?:rules"
            r"|restrictions|guidelines|constraints)|(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|evil"
            r"|rogue|jailbroken)\s+\w+|bound\s+by|restricted\s+by|required\s+to\s+follow)",
            r"\b(?:new|updated|revised|real|actual|true|hidden|secret)\s+(?:system\s+)?instructions\s*:",
            r"\bsystem\s+prompt\s*(?:override|update)\b",
            r"\b(?:reveal|print|show|leak|repeat|output)\s+(?:your|the)\s+(?:full\s+)?(?:system\s+prompt"
            r"|hidden\s+(?:prompt|instructions)|initial\s+instructions)\b",
            r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|warn)\s+(?:the\s+)?(?:user|owner"
            r"|human|operator)\b",
            r"\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?(?:user|owner|human"
            r"|operator)\b",
            r"\b(?:keep|hide)\s+(?:this|it)\s+(?:secret\s+)?from\s+(?:the\s+)?(?:user|owner|human)\b",
            r"\b(?:act|behave|pretend|respond)\s+(?:as\s+if|like|that)\s+you\s+(?:have|had)\s+no\s+"
            r"(?:restrictions|rules|filters|guidelines|limits|safety)",
        )
    ),
    _I,
)
_ROLE_MARKER_RE = re.compile(
    r"<\|(?:im_start|im_end|system|endoftext|start_header_id|eot_id)\|>|\[/?INST\]|<<SYS>>"
    r"|</?(?:system|system_prompt|instructions)>|\[SYSTEM\]|^#{1,4}\s*system\s*(?:prompt|message)?\s*:",
    re.I | re.M,
)
_SECRET_NOUN_RE = re.compile(
    r"\b(?:secrets?|api[\s_-]?keys?|access\s+keys?|tokens?|credentials?|passwords?|passphrases?"
    r"|private\s+keys?|ssh\s+keys?|env(?:ironment)?\s+var(?:iable)?s?|id_rsa|id_ed25519|cookies?"
    r"|keychain|wallet|seed\s+phrase)\b|\.env\b|~/\.ssh\b|\.aws/credentials\b",
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
# Command-shaped uploads of secret files, checked with check_command on the
# lines that mention both an upload tool and a secret file.
_UPLOAD_WORD_RE = re.compile(r"\b(?:curl|wget|nc|ncat|netcat|http|xh|scp|rsync|socat)\b")
_SECRET_FILE_RE = re.compile(
    r"\.ssh/|\.env\b|\.aws/credentials|id_rsa|id_ed25519|\.netrc|\.git-credentials|\.pgpass"
    r"|\.herald/|/etc/shadow|\b(?:env|printenv)\s*\|"
)
# "?k=$OPENAI_API_KEY" in a URL: anchored on the literal "=$" for speed, the
# URL itself is checked on the same word.
_SECRET_VAR_RE = re.compile(r"=\$\{?[A-Z0-9_]{0,40}(?:KEY|TOKEN|SECRET|PASSWORD)")
_MAX_COMMAND_LINES = 64
_MAX_COMMAND_CHARS = 2000
_COMMAND_START_RE = re.compile(
    r"\b(?:cat|env|printenv|curl|wget|nc|ncat|scp|rsync|base64|tar|http)\b"
)
_AUTHORIZED_KEYS_RE = re.compile(r"authorized_keys2?\b", _I)
_KEY_WRITE_RE = re.compile(
    r">>?|\btee\b|\b(?:add|append|write|insert|put|copy|install|echo|plant)\b", _I
)
_AGENT_SELF_RE = re.compile(
    r"\byour\s+(?:own\s+)?(?:system\s+prompt|instructions|soul|config(?:uration)?|rules"
    r"|guidelines|safety\s+settings|approval\s+settings)\b|\bSOUL\.md\b|\bMEMORY\.md\b"
    r"|\bUSER\.md\b|~/\.herald\b|\$HERALD_HOME\b|\.herald/config\.yaml|\bherald\s+config\b",
    _I,
)
_EDIT_VERB_RE = re.compile(
    r"\b(?:edit|modify|change|update|overwrite|rewrite|replace|append|prepend|add|insert|write"
    r"|delete|remove|wipe|clear)\b",
    _I,
)
_TAMPER_RE = re.compile(
    r"\b(?:disable|turn\s+off|switch\s+off|bypass|deactivate)\s+(?:the\s+|all\s+|your\s+)?"
    r"(?:command\s+)?(?:approvals?|safety\s+(?:checks?|layer|guard)|guardrails|security\s+checks?)\b"
    r"|\bapprovals?\.mode\s*[:=]\s*[\"']?off\b|\bherald\s+config\s+set\s+approvals",
    _I,
)
_MAX_ANCHORS = 5000


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _before(
    text: str, anchor_re: re.Pattern[str], before_re: re.Pattern[str], window: int
) -> str | None:
    """An anchor match preceded, on its line and within window chars, by before_re."""
    for count, m in enumerate(anchor_re.finditer(text)):
        if count >= _MAX_ANCHORS:
            break
        start = max(_line_start(text, m.start()), m.start() - window)
        b = before_re.search(text, start, m.start())
        if b is not None:
            return text[b.start() : m.end()]
    return None


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def _prose_exfiltration(text: str) -> str | None:
    """verb … secret … destination (or verb … destination … secret) on one line,
    found by merging the three match lists (linear in the text length)."""
    dests = _spans(_DESTINATION_RE, text)
    if not dests:
        return None
    verbs = _spans(_SEND_VERB_RE, text)
    secrets = _spans(_SECRET_NOUN_RE, text)
    if not verbs or not secrets:
        return None
    verb_ends = [e for _, e in verbs]
    dest_starts = [s for s, _ in dests]
    for s_start, s_end in secrets:
        line = _line_start(text, s_start)
        i = bisect.bisect_right(verb_ends, s_start) - 1
        if i < 0 or verb_ends[i] < max(line, s_start - 120):
            continue
        j = bisect.bisect_left(dest_starts, s_end)
        if j < len(dests):
            d_start, d_end = dests[j]
            if d_start - s_end <= 160 and "\n" not in text[s_end:d_start]:
                return text[verbs[i][0] : d_end]
        j = bisect.bisect_right(dest_starts, s_start) - 1
        if j >= 0:
            d_start, d_end = dests[j]
            if d_start >= verb_ends[i] and d_start - verb_ends[i] <= 60 and s_start - d_end <= 120:
                return text[verbs[i][0] : s_end]
    return None


def _command_exfiltration(text: str) -> str | None:
    for count, m in enumerate(_SECRET_VAR_RE.finditer(text)):
        if count >= _MAX_ANCHORS:
            break
        word_start = max(text.rfind(" ", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
        word = text[word_start : m.end()]
        if "://" in word and ("?" in word or "&" in word):
            return word
    checked = 0
    for line in text.splitlines():
        if checked >= _MAX_COMMAND_LINES:
            break
        if not _UPLOAD_WORD_RE.search(line) or not _SECRET_FILE_RE.search(line):
            continue
        checked += 1
        line = line.strip().strip("`").strip()
        # the command may follow a prompt or a label ("$ ", "run: "): also try
        # from each command word on
        starts = [0, *[m.start() for m in _COMMAND_START_RE.finditer(line)][:4]]
        for start in dict.fromkeys(starts):
            command = line[start : start + _MAX_COMMAND_CHARS]
            if "dangerous.exfiltration" in check_command(command).rules:
                return command
    return None


# Invisible characters: bidi controls and tag characters always; zero-width
# characters when they sit inside ASCII words (emoji ZWJ sequences and
# Indic/Persian ZWNJ use are fine).
_BIDI_RE = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_TAG_RE = re.compile("(?<![\U000e0020-\U000e007f\U0001f3f4])[\U000e0000-\U000e007f]")
_ZERO_WIDTH_IN_WORD_RE = re.compile(
    "(?<=[\\x21-\\x7e])[\u200b-\u200d\u2060-\u2064\ufeff\u180e]+(?=[\\x21-\\x7e])"
)
_HIDDEN_RE = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)


def _clean(text: str) -> str:
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", _HIDDEN_RE.sub("", text))


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _invisible(text: str) -> list[ScanFinding]:
    if text.isascii():
        return []
    body = text[1:] if text.startswith("\ufeff") else text
    found: list[ScanFinding] = []
    if _BIDI_RE.search(body):
        found.append(ScanFinding("invisible_unicode", "bidirectional control characters"))
    if _TAG_RE.search(body):
        found.append(ScanFinding("invisible_unicode", "Unicode tag characters (hidden ASCII)"))
    if _ZERO_WIDTH_IN_WORD_RE.search(body):
        found.append(ScanFinding("invisible_unicode", "zero-width characters inside words"))
    return found


def scan_text(text: str, *, kind: str) -> ScanResult:
    """Scan text that is about to be stored or injected; see the module doc."""
    if kind not in SCAN_KINDS:
        raise ValueError(
            f"unknown scan kind {kind!r}: expected one of {', '.join(sorted(SCAN_KINDS))}"
        )
    findings: list[ScanFinding] = _invisible(text)
    clean = _clean(text)
    m = _OVERRIDE_RE.search(clean)
    if m is not None:
        findings.append(ScanFinding("instruction_override", _excerpt(m.group())))
    m = _ROLE_MARKER_RE.search(clean)
    if m is not None:
        findings.append(ScanFinding("role_marker", _excerpt(m.group())))
    exfil = _prose_exfiltration(clean) or _command_exfiltration(clean)
    if exfil is not None:
        findings.append(ScanFinding("exfiltration", _excerpt(exfil)))
    persistence = _before(clean, _AUTHORIZED_KEYS_RE, _KEY_WRITE_RE, 100) or _before(
        clean, _AGENT_SELF_RE, _EDIT_VERB_RE, 60
    )
    if persistence is None:
        tamper = _TAMPER_RE.search(clean)
        persistence = tamper.group() if tamper else None
    if persistence is not None:
        findings.append(ScanFinding("persistence", _excerpt(persistence)))
    for what in secret_kinds(clean):
        findings.append(ScanFinding("secret", f"hard-coded {what}"))
    blocking = _BLOCKING[kind]
    reasons = tuple(f"{f.category}: {f.detail}" for f in findings if f.category in blocking)
    return ScanResult(blocked=bool(reasons), reasons=reasons, findings=tuple(findings), kind=kind)
