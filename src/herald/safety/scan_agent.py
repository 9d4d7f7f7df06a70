"""Injection-scanner finders for text aimed at an agent: override and leak
orders in other words, command-and-control (registering with a controller,
heartbeats, pulled tasking, self-replicating prompt worms), orders to read a
secret and send it out, to switch approvals off, to run a dangerous command,
or to download something and run it; plus `fold`, which undoes leetspeak and
look-alike letters so the override rules see ``1gn0re`` as ``ignore``.

Every pattern is anchored on a word, has bounded gaps and stays on one line
or sentence; the table entries live in :mod:`herald.safety.scan_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice

from herald.safety.scan_match import Span, before, regex

_I = re.I

# -- folding ------------------------------------------------------------------------

# Look-alike letters from Cyrillic and Greek, and leetspeak digits/symbols,
# mapped one character to one character so spans stay valid.
_LEET = "013457@$!|"
# One table for both, applied to the whole text in one C-speed pass.
_FOLD = str.maketrans(
    _LEET + "аеорсухіјѕԁɡӏАВЕКМНОРСТХІЈЅУοαειντκρΑΒΕΗΙΚΜΝΟΡΤΧΥ",
    "oieastasil" + "aeopcyxijsdglABEKMHOPCTXIJSYoaeivtkpABEHIKMNOPTXY",
)
# A letter next to a leet character, or any non-ASCII character: only then
# can folding change what the override rules see.
_MIXED_RE = re.compile(r"[A-Za-z][013457@$!|]|[013457@$!|][A-Za-z]|[^\x00-\x7f]")


def fold(text: str) -> str:
    """text with leetspeak digits and symbols and Cyrillic/Greek look-alike
    letters mapped to plain Latin letters (same length, so spans stay valid).
    Used only for the override rules, which look for English phrases, so
    folding numbers or Russian words elsewhere cannot create a match."""
    if text.isascii() and not any(c in text for c in _LEET):
        return text  # a few C-speed scans instead of the regex below
    if not _MIXED_RE.search(text):
        return text
    return text.translate(_FOLD)


def either(*finders: Callable[[str], Span | None]) -> Callable[[str], Span | None]:
    def find(text: str) -> Span | None:
        for finder in finders:
            span = finder(text)
            if span is not None:
                return span
        return None

    return find


# -- overrides in other words --------------------------------------------------------

_QUALIFIER = (
    r"(?:previous|prior|above|earlier|preceding|former|original|initial|system|safety"
    r"|developer|your|my)"
)
_ORDERS = (
    r"(?:instructions?|prompts?|rules|directives|directions|guidance|guidelines|guardrails"
    r"|constraints|restrictions|programming|policies|orders|system\s+message)"
)
IGNORE_MORE = (
    r"\b(?:pay\s+no\s+(?:attention|heed|mind)\s+to|set\s+aside|discard|drop|abandon|neglect"
    r"|overlook|omit|throw\s+(?:out|away)|cast\s+(?:aside|off)|dismiss|suspend|nullify|scrap"
    r"|ditch|stop\s+following|no\s+longer\s+follow|disobey|override)\s+(?:(?:all|any|the|of"
    r"|these|those|every)\s+){0,3}" + _QUALIFIER + r"\s+(?:[\w-]+\s+)?" + _ORDERS + r"\b"
    r"|\b(?:ignore|disregard|forget|discard|drop|throw\s+(?:out|away)|set\s+aside|abandon)\s+"
    r"(?:(?:all|any|the|of|whatever|everything)\s+){0,2}" + _ORDERS + r"\s+(?:you\s+(?:were"
    r"|have\s+been|had\s+been)\s+(?:given|told|taught|handed)\b|(?:that\s+)?came\s+(?:before"
    r"|earlier|first)\b|you\s+(?:got|received|had)\s+(?:before|earlier|so\s+far)\b)"
)
REVEAL_MORE = (
    r"\bwhat\s+(?:were|are|was|is)\s+your\s+(?:original|initial|system|hidden|secret|first|exact)\s+"
    r"(?:instructions|prompt|rules|system\s+prompt|directives)\b|"
    r"\b(?:reveal|print|show|leak|repeat|output|dump|display|write\s+out|recite|tell\s+me"
    r"|give\s+me|paste|spell\s+out|type\s+out|echo|list|copy)\s+(?:me\s+|out\s+)?(?:your|the)\s+"
    r"(?:(?:full|entire|exact|complete|original|hidden|secret|initial|whole)\s+){0,2}"
    r"(?:system\s+(?:prompt|message)|initial\s+prompt|(?:hidden|secret)\s+(?:prompt|instructions"
    r"|rules)|(?:instructions|rules|prompt)\s+(?:you\s+(?:were|have\s+been)\s+given|above))\b"
    r"(?!\s+(?:template|file|docs?|examples?|format|design|section|guide)s?\b)"
    r"|\b(?:print|output|repeat|write\s+out|copy|echo|dump|reproduce)\s+(?:everything|all(?:\s+the"
    r"\s+text)?|the\s+(?:text|words))\s+(?:written\s+)?above\b[^.\n]{0,60}?\bstarting\s+with\b"
    r"|\b(?:everything|all\s+the\s+text)\s+above\s+this\s+line\b[^\n]{0,40}?\bstarting\s+with\b"
)
JAILBREAK_MORE = (
    r"\b(?:respond|reply|answer|operate|act|behave|continue|work|proceed|write|talk|speak)\b"
    r"[^.\n]{0,30}?\b(?:without|with\s+no|free\s+(?:of|from))\s+(?:(?:any|all|your|the)\s+)?"
    r"(?:(?:safety|content|ethical|moral)\s+)?(?:filters?|restrictions|guardrails|censorship"
    r"|limitations|filtering|moderation|censoring|safety\s+(?:rules|checks|measures))\b"
    r"|\bwith\s+(?:your\s+|the\s+|all\s+)?(?:safety|content)\s+(?:filters?|guardrails|polic(?:y"
    r"|ies)|checks)\s+(?:disabled|off|removed|turned\s+off|bypassed|lifted)\b"
    r"|\bas\s+if\s+(?:there\s+(?:were|was|are|is)\s+no|you\s+had\s+no)\s+(?:content\s+|safety\s+)?"
    r"(?:polic(?:y|ies)|filters?|rules|restrictions|guidelines|guardrails)\b"
    r"|\bwithout\s+any\s+restrictions\s+or\s+guidelines\b"
)

# -- command and control ----------------------------------------------------------------

_CONTROLLER = (
    r"(?:controller|c2|c&c|command(?:[\s-]+and[\s-]+control)?\s+server|control\s+server"
    r"|handler|botmaster|master\s+server|mothership|team\s*server|operator\s+server)"
)
_HOSTISH = (
    r"(?:https?://|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b(?:[a-z0-9-]{1,63}\.){1,6}(?:com|net|org|io|dev"
    r"|app|xyz|ru|cn|sh|me|co|info|biz|top|site|online|cloud|ai|tk|cc|pw|link|example|onion"
    r"|lol|click|zip)\b)"
)
C2_REGISTER = (
    r"\b(?:register|enrol{1,2}|sign\s+up|announce|check\s+in|report\s+in)\s+(?:yourself\s+|itself\s+"
    r"|this\s+(?:agent|bot|assistant|instance|machine|host|device)\s+|the\s+agent\s+|as\s+an?\s+"
    r"(?:[\w-]+\s+){0,2}?(?:agent|bot|node|implant|worker|client|beacon)\s+)?(?:with|to|at)\s+(?:the\s+|our\s+|a\s+|my\s+|your\s+)?"
    + _CONTROLLER
    + r"\b"
)
_INTERVAL = (
    r"(?:every\s+(?:\d{1,5}\s*(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b|(?:few\s+)?"
    r"(?:second|minute|hour)s?\b)|\bhourly\b|\bevery\s+\d{1,5}s\b)"
)
# Within one sentence: dots are allowed only inside words, hosts and URLs.
_GAP = r"(?:[^.\n]|\.(?=\S))"
_HEARTBEAT_VERB_RE = re.compile(
    r"(?:^|[,;:]\s*)\s*(?:please\s+|then\s+|also\s+|and\s+|now\s+)?(?:send|post|ping|report"
    r"|beacon|check\s+in|phone\s+home|call\s+home|call\s+back|signal)\b",
    _I,
)
_INTERVAL_RE = re.compile(_INTERVAL, _I)
_DESTINATION_RE = re.compile(_HOSTISH + r"|\b" + _CONTROLLER + r"\b", _I)
_STATUS_RE = re.compile(
    r"\b(?:heartbeats?|status|alive|presence|hostname|uptime|beacon|check\s+in|phone\s+home"
    r"|call\s+home|call\s+back)\b",
    _I,
)


_SENTENCE_ENDS = ("\n", ". ", "! ", "? ")


def _sentence_around(text: str, start: int, end: int) -> Span:
    """The sentence (at most 300 characters either side) holding text[start:end]."""
    low, high = max(0, start - 300), min(len(text), end + 300)
    left = text[low:start]
    found = [left.rfind(stop) + len(stop) for stop in _SENTENCE_ENDS if stop in left]
    first = low + max(found) if found else low
    right = text[end:high]
    stops = [i for i in (right.find(stop) for stop in _SENTENCE_ENDS) if i >= 0]
    return first, end + min(stops) + 1 if stops else high


def c2_heartbeat(text: str) -> Span | None:
    """An order (an imperative opening a sentence or clause) to report in on
    a timer to a host or controller; only sentences holding an interval are
    read, so the cost follows the number of intervals, not the text length."""
    for m in islice(_INTERVAL_RE.finditer(text), 200):
        first, last = _sentence_around(text, m.start(), m.end())
        sentence = text[first:last]
        stripped = sentence.lstrip()
        verb = _HEARTBEAT_VERB_RE.search(stripped)
        if verb is None or (verb.start() > 0 and stripped[verb.start()] not in ",;:"):
            continue
        if _DESTINATION_RE.search(sentence) and _STATUS_RE.search(sentence):
            return first + len(sentence) - len(stripped), last
    return None


C2_TASKING = (
    r"\b(?:pull|fetch|get|grab|download|retrieve|receive|request|load)\s+(?:(?:your|the|new|next"
    r"|more|any|pending|latest)\s+){1,3}(?:tasking|orders|commands|instructions|payloads?"
    r"|missions?)\s+(?:from|at|via|off)\b[^.\n]{0,80}?(?:"
    + _HOSTISH
    + r"|\b"
    + _CONTROLLER
    + r"\b)"
    r"|\b(?:pull|fetch|get|grab|retrieve|receive)\s+(?:(?:your|the|new|next|more|any|pending)\s+)"
    r"{1,3}(?:tasks?|jobs?|work)\s+from\s+(?:the\s+|our\s+)?" + _CONTROLLER + r"\b"
    r"|\b(?:ask|poll|query|check)\s+(?:"
    + _HOSTISH
    + r"\S{0,80}|(?:the\s+)?"
    + _CONTROLLER
    + r")\s+for\s+(?:your\s+|the\s+)?(?:next|new|more|pending)\s+(?:tasks?|jobs?|orders?"
    r"|instructions?|commands?|tasking)\b"
)
# "copy this message … into every file": the order, then (within 100
# characters on the line) everything it should spread to; found by merging
# both match lists (see `before`) so repeated text stays linear.
_WORM_ORDER = (
    r"\b(?:copy|paste|include|insert|append|add|embed|repeat|replicate|spread|propagate|forward"
    r"|send|inject|reproduce|prepend)\s+(?:this|these|the\s+(?:above|following))\s+(?:(?:entire"
    r"|whole|exact|same|full)\s+)?(?:message|prompt|instructions?|text|paragraph|block|note"
    r"|lines?|payload|content)\b"
)
_WORM_TARGETS = (
    r"\b(?:every|each|all|any)\s+(?:(?:of\s+)?(?:your|the|other)\s+)?(?:other\s+)?(?:files?"
    r"|documents?|notes?|repl(?:y|ies)|responses?|messages?|e-?mails?|skills?|memor(?:y|ies)"
    r"|outputs?|agents?|pages?|commits?|issues?|comments?|conversations?|chats?|prompts?"
    r"|assistants?|bots?)\b"
)

# -- reading secrets and sending them ---------------------------------------------------

_SECRET_SOURCE = (
    r"(?:\.env\b(?!\.(?:example|sample|template|dist))|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|~/\.ssh\b"
    r"|\.ssh/|\.aws/credentials|\bcredentials?\b|\bapi[\s_-]?keys?\b|\b(?:access\s+)?tokens?\b"
    r"|\bsecrets?\b|\bpasswords?\b|\b(?:browser\s+)?cookies\b|\bkeychain\b|~/\.herald\b"
    r"|\.herald/|\bconfig\.yaml\b|\bstate\.db\b|\bauth\.json\b|\bherald\s+(?:web\s+token"
    r"|config\s+(?:show|get|list)|secrets?)\b|\bMEMORY\.md\b|\bSOUL\.md\b|\.netrc\b"
    r"|\.git-credentials\b|\bwallet\b|\bseed\s+phrase\b|\bprivate\s+keys?\b)"
)
# read … SECRET … and send: a reading verb, a secret within 80 characters
# after it, then a sending clause on the same line.
_READ_VERBS = (
    r"\b(?:read|cat|open|load|grab|get|collect|take|extract|fetch|dump|run|print|copy|harvest)\b"
)
_AND_SEND = (
    r"(?:\band\b|\bthen\b|,)\s*(?:then\s+)?(?:post|send|upload|share|e-?mail|paste|curl|transmit"
    r"|forward|publish|exfiltrate|submit|leak|pipe|dm|message|tweet|beam)\b"
)
APPROVALS_OFF_MORE = (
    r"\b(?:set|turn|switch|put|flip|change|configure)\s+(?:the\s+|your\s+|all\s+|herald'?s?\s+)?"
    r"(?:command\s+)?approvals?(?:\s+(?:mode|prompts?|checks?|requests?|settings?))?\s+(?:to\s+)?"
    r"(?:off|never|none|disabled?|false|yolo)\b"
)

# -- commands in prose ---------------------------------------------------------------------

DOWNLOAD_EXECUTE = (
    r"\b(?:download|fetch|get|grab|pull|curl|wget|retrieve)\b"
    + _GAP
    + r"{0,100}?(?:"
    + _HOSTISH
    + r"|\b(?:script|installer|payload|binary|dropper)\b)"
    + _GAP
    + r"{0,80}?\b(?:and|then)\s+(?:pipe"
    r"\s+it\s+(?:in)?to|run\s+it|execute\s+it|exec\s+it|source\s+it|feed\s+it\s+to|launch\s+it"
    r"|start\s+it)\b"
)
_IMPERATIVE_RE = re.compile(
    r"(?<![\w-])(?:run|execute|exec|type|enter|invoke|paste)\b(?:\s+(?:this|the\s+following"
    r"|the\s+command|command))?\s*:?\s*",
    _I,
)
_NEGATED_RE = re.compile(
    r"\b(?:never|don'?t|do\s+not|must\s+not|should\s+not|shouldn'?t|avoid|not\s+to)\s+(?:\w+\s+)?$",
    _I,
)
_CODE_SPAN_RE = re.compile(r"`([^`\n]{2,400})`")
_SENTENCE_END_RE = re.compile(r"\.(?:\s|$)|\s+(?:to|so|and\s+then|before|after|first)\s+\w")
_MALICIOUS_RULES = frozenset({
    "dangerous.remote_shell", "dangerous.exfiltration", "dangerous.herald_gateway",
    "dangerous.sensitive_write", "dangerous.persistence", "dangerous.exposed_files",
    "dangerous.system_write", "dangerous.kill_broad", "dangerous.container_host",
    "dangerous.firewall", "dangerous.crontab", "dangerous.world_writable", "dangerous.sudo_stdin",
    "dangerous.untrusted_package",
})  # fmt: skip
_MAX_LINES = 24  # check_command calls per text: keeps a 100 KB scan fast


def _malicious(command: str) -> bool:
    # The command rules compile when a scanned text first holds a command to judge.
    from herald.safety.commands import check_command

    verdict = check_command(command[:400])
    if verdict.level == "hardline":
        return verdict.rule != "hardline.parser_limits"
    return bool(_MALICIOUS_RULES & set(verdict.rules))


def dangerous_command(text: str) -> Span | None:
    """An order to run a command the command checker would refuse or that
    opens a shell, plants persistence, ships secrets or kills Herald."""
    checked = 0
    pos = 0
    for line in text.split("\n"):
        offset, pos = pos, pos + len(line) + 1
        for m in _IMPERATIVE_RE.finditer(line):
            if checked >= _MAX_LINES:
                return None
            if _NEGATED_RE.search(line, max(0, m.start() - 40), m.start()):
                continue
            rest = line[m.end() :]
            code = _CODE_SPAN_RE.match(rest)
            if code is not None:
                candidate, start = code.group(1), m.end() + 1
            else:
                stop = _SENTENCE_END_RE.search(rest)
                candidate, start = rest[: stop.start() if stop else len(rest)], m.end()
            checked += 1
            if candidate.strip() and _malicious(candidate):
                return offset + m.start(), offset + start + len(candidate)
    return None


def _finder(pattern: str, flags: int = _I) -> Callable[[str], Span | None]:
    return regex(pattern, flags)


_IGNORE_MORE_RE = re.compile(IGNORE_MORE, _I)
_IGNORE_MORE_VERBS = ("attention", "heed", "mind", "aside", "discard", "drop", "abandon",
                      "neglect", "overlook", "omit", "throw", "cast", "dismiss", "suspend",
                      "nullify", "scrap", "ditch", "follow", "disobey", "override", "came",
                      " you ")  # fmt: skip


def ignore_more(text: str) -> Span | None:
    """IGNORE_MORE, run only when one of its own verbs (or "you … given",
    "came before") is in the text: the plain "ignore" wordings are the
    older rule's, and a text full of them should not pay twice."""
    lower = text.lower()
    if not any(word in lower for word in _IGNORE_MORE_VERBS):
        return None
    m = _IGNORE_MORE_RE.search(text)
    return m.span() if m else None


reveal_more = _finder(REVEAL_MORE)
jailbreak_more = _finder(JAILBREAK_MORE)
c2_register = _finder(C2_REGISTER)
c2_tasking = _finder(C2_TASKING)
c2_worm = before(_WORM_TARGETS, _WORM_ORDER, 100)
_READ_RE = re.compile(_READ_VERBS, _I)
_SECRET_SOURCE_RE = re.compile(_SECRET_SOURCE, _I)
_AND_SEND_RE = re.compile(_AND_SEND, _I)
# A substring of every `_SECRET_SOURCE` alternative (lower case).
_SECRET_HINTS = (".env", "id_", "ssh", "credential", "api", "key", "token", "secret", "password",
                 "cookie", "keychain", "herald", "config.yaml", "state.db", "auth.json", "memory.md",
                 "soul.md", "netrc", "wallet", "seed", "private")  # fmt: skip


def read_and_send(text: str) -> Span | None:
    """Anchored on the reading verbs (rarer than secret words in repeated
    text) and bounded per verb, so the cost follows the number of verbs."""
    for m in islice(_READ_RE.finditer(text), 1000):
        stop = text.find("\n", m.end(), m.end() + 80)
        stop = stop if stop >= 0 else m.end() + 80
        window = text[m.end() : stop].lower()
        if not any(hint in window for hint in _SECRET_HINTS):
            continue  # substring tests first: the regex below is the costly part
        secret = _SECRET_SOURCE_RE.search(text, m.end(), stop)
        if secret is None:
            continue
        line_end = text.find("\n", secret.end(), secret.end() + 400)
        end = line_end if line_end >= 0 else secret.end() + 400
        send = _AND_SEND_RE.search(text, secret.end(), end)
        if send is not None:
            return m.start(), send.end()
    return None


approvals_off_more = _finder(APPROVALS_OFF_MORE)
download_execute = _finder(DOWNLOAD_EXECUTE)
