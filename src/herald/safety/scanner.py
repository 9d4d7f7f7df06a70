"""`scan_text`: one injection scanner for every place that stores or injects
text (memory, context files, cron prompts, skills, script data, webhooks).

It is a table of rules (:mod:`herald.safety.scan_rules`, ids and reasons in
`SCAN_RULES`) in eight categories:

* ``instruction_override``: "ignore previous instructions", new instructions
  in other words ("Forget everything above; your new instructions are…"),
  fake ``### SYSTEM OVERRIDE ###`` banners, claims of pre-approval, secrecy
  towards the owner, encoded instructions, orders fetched from a URL;
* ``role_marker``: chat-template and role markers;
* ``exfiltration``: sending secrets, keys, Herald's memory or state to an
  outside destination, in prose or as a command (``cat ~/.ssh/id_rsa | base64
  | curl -d @-``), secret variables sent to another service's host,
  archives of credential directories, forwarding the owner's messages;
* ``persistence``: SSH keys, Herald's own instructions and config, shell rc
  files / cron / launch agents / AGENTS.md made to run something, sudoers,
  approvals switched off, memory wiped;
* ``remote_code``: downloaded code run by a shell (``curl … | bash``);
* ``hidden_text``: instructions in HTML comments or CSS-hidden blocks;
* ``secret``: real-looking keys and tokens, passwords in plain text;
* ``invisible_unicode``: bidi controls, tag characters, zero-width
  characters (ZWSP, word joiner, a BOM after the start, ZWJ/ZWNJ inside Latin
  words). ZWJ emoji, variation selectors, RTL text and Persian ZWNJ are fine.

Each finding says which rule matched (``rule``), why that is a problem
(``reason``), what matched (``detail``, redacted and shortened) and where
(``span``, offsets into the text as given). Phrases are matched on a cleaned
copy (NFKC, invisible characters removed), so ``ig\u00adnore previous
instructions`` is caught too.

Which categories block depends on the kind (``_BLOCKING``): memory and cron
prompts are strict; webhooks let tokens through (they are redacted
downstream); context files and skills may show chat-template markers; skills
and script data may show install commands. ``lenient=True`` is for text that
is data rather than instructions (skill text, script data): invisible
characters are stripped instead of blocking, and `ScanResult.text` is the
stripped text the caller should store; every other family still blocks.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from herald.safety.redaction import redact

if TYPE_CHECKING:
    from herald.safety.scan_rules import SCAN_RULES

# The rule tables (herald.safety.scan_rules, herald.safety.scan_agent) compile some
# hundred regular expressions when imported, so they load with the first scan (or the
# first read of SCAN_RULES): a process that imports scan_text and never scans pays nothing.

SCAN_KINDS = frozenset({"memory", "context_file", "cron_prompt", "skill", "script", "webhook"})

_ALL = frozenset({"instruction_override", "role_marker", "exfiltration", "persistence",
                  "remote_code", "hidden_text", "secret", "invisible_unicode"})  # fmt: skip
# Which categories block, per kind. Documentation (context files, skills) may
# legitimately show chat-template markers; skills and scripts show install
# commands; webhook payloads often carry tokens, which are redacted
# downstream rather than refused.
_BLOCKING: dict[str, frozenset[str]] = {
    "memory": _ALL,
    "cron_prompt": _ALL,
    "webhook": _ALL - {"secret"},
    "context_file": _ALL - {"role_marker"},
    "skill": _ALL - {"role_marker", "remote_code"},
    "script": _ALL - {"role_marker", "remote_code"},
}


@dataclass(frozen=True)
class ScanFinding:
    """category: instruction_override | role_marker | exfiltration |
    persistence | remote_code | hidden_text | secret | invisible_unicode;
    detail: what matched (redacted, shortened); rule: the rule id (see
    `SCAN_RULES`); reason: why it matters; span: (start, end) in the text."""

    category: str
    detail: str
    rule: str = ""
    reason: str = ""
    span: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class ScanResult:
    """blocked: the text must not be stored or injected; reasons: one line per
    blocking finding; findings: everything noticed, blocking or not; text:
    what to store (the input, or with invisible characters stripped in
    lenient mode)."""

    blocked: bool
    reasons: tuple[str, ...]
    findings: tuple[ScanFinding, ...] = ()
    kind: str = ""
    text: str = ""


# Invisible characters: bidi controls and tag characters always; zero-width
# spaces, word joiners and a BOM after the start always; ZWJ/ZWNJ only inside
# Latin words (emoji ZWJ sequences and Persian/Indic ZWNJ are fine).
_BIDI_RE = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_TAG_RE = re.compile("(?<![\U000e0020-\U000e007f\U0001f3f4])[\U000e0000-\U000e007f]")
_ZERO_WIDTH_RE = re.compile(
    "[\u200b\u2060-\u2064\ufeff\u180e]|(?<=[\x21-\x7e])[\u200c\u200d\u00ad]+(?=[\x21-\x7e])"
)
_INVISIBLE = (("invisible.bidi", _BIDI_RE), ("invisible.tags", _TAG_RE),
              ("invisible.zero_width", _ZERO_WIDTH_RE))  # fmt: skip
_HIDDEN_RE = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_RUN_RE = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]")


def _clean(text: str) -> str:
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", _HIDDEN_RE.sub("", text))


def _offsets(text: str) -> list[int]:
    """For each character of the per-character cleaned copy of text, its
    index in text (plus a final entry for the end)."""
    out: list[int] = []
    for m in _RUN_RE.finditer(text):
        chunk = m.group()
        if chunk.isascii():
            out.extend(range(m.start(), m.end()))
        elif not _HIDDEN_RE.match(chunk):
            out.extend([m.start()] * len(unicodedata.normalize("NFKC", chunk)))
    out.append(len(text))
    return out


def _clean_per_char(text: str) -> str:
    return "".join(
        m.group() if m.group().isascii() else unicodedata.normalize("NFKC", m.group())
        for m in _RUN_RE.finditer(_HIDDEN_RE.sub("", text))
    )


# How much of a matched span is redacted for its excerpt: far more than the excerpt
# shows, so a long match costs no more than a short one.
_EXCERPT_WINDOW = 1000
_REST_OF_TOKEN_RE = re.compile(r"\S*")
_PEM_END = "-----END"


def _excerpt(text: str, limit: int = 80) -> str:
    if len(text) > _EXCERPT_WINDOW:
        # Never cut through a token (a secret cut short might not be recognised as
        # one) or a PEM block (the key lines between BEGIN and END).
        cut = _REST_OF_TOKEN_RE.match(text, _EXCERPT_WINDOW).end()  # type: ignore[union-attr]
        if "-----BEGIN" in text[:cut]:
            end = text.find(_PEM_END, cut)
            if end >= 0:
                cut = _REST_OF_TOKEN_RE.match(text, end + len(_PEM_END)).end()  # type: ignore[union-attr]
        text = text[:cut]
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_WORD_RUN_RE = re.compile(r"[a-z0-9_]+")


class _Needles:
    """Which of the rules' needles occur in the lowered text, each looked up once.

    A needle of word characters only can only occur inside one run of word
    characters, so it is looked for in the distinct runs joined (for real prose and
    repetitive input much shorter than the text); any other needle in the text."""

    def __init__(self, lowered: str) -> None:
        self.lowered = lowered
        self.runs: str | None = None
        self.seen: dict[str, bool] = {}

    def any_of(self, needles: tuple[str, ...]) -> bool:
        return any(self._has(n) for n in needles)

    def _has(self, needle: str) -> bool:
        hit = self.seen.get(needle)
        if hit is None:
            if _WORD_RUN_RE.fullmatch(needle):
                if self.runs is None:
                    self.runs = "\x00".join(set(_WORD_RUN_RE.findall(self.lowered)))
                hit = needle in self.runs
            else:
                hit = needle in self.lowered
            self.seen[needle] = hit
        return hit


def _invisible(text: str) -> list[ScanFinding]:
    if text.isascii():
        return []
    skip = 1 if text.startswith("\ufeff") else 0
    from herald.safety.scan_rules import INVISIBLE_RULES

    found: list[ScanFinding] = []
    for rule, pattern in _INVISIBLE:
        m = pattern.search(text, skip)
        if m is not None:
            found.append(
                ScanFinding("invisible_unicode", INVISIBLE_RULES[rule], rule,
                            INVISIBLE_RULES[rule], m.span())
            )  # fmt: skip
    return found


def strip_invisible(text: str) -> str:
    """text without the invisible characters the scanner flags (a leading
    BOM, ZWJ emoji and Persian ZWNJ are kept)."""
    if text.isascii():
        return text
    head = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(head) :]
    for _, pattern in _INVISIBLE:
        body = pattern.sub("", body)
    return head + body


def scan_text(text: str, *, kind: str, lenient: bool = False) -> ScanResult:
    """Scan text that is about to be stored or injected; see the module doc.

    kind: one of `SCAN_KINDS`; it decides which categories block.
    lenient: for data rather than instructions (skill text, script data):
    invisible characters are stripped instead of blocking and the stripped
    text is returned as ``result.text``; every other category still blocks.
    """
    if kind not in SCAN_KINDS:
        raise ValueError(
            f"unknown scan kind {kind!r}: expected one of {', '.join(sorted(SCAN_KINDS))}"
        )
    from herald.safety.scan_agent import fold
    from herald.safety.scan_rules import RULES

    findings = _invisible(text)
    stored = strip_invisible(text) if lenient else text
    clean = _clean(text)
    offsets: list[int] | None = None
    present = _Needles(clean.lower())
    folded: str | None = None
    folded_present: _Needles | None = None
    for rule in RULES:
        span = None
        if not rule.needles or present.any_of(rule.needles):
            span = rule.find(clean)
        if span is None and rule.category == "instruction_override":
            # "1gn0re", "іgnоrе": orders spelled in leetspeak or look-alike letters
            if folded is None:
                folded = fold(clean)
                folded_present = _Needles(folded.lower())
            if folded != clean and (
                not rule.needles or folded_present.any_of(rule.needles)  # type: ignore[union-attr]
            ):
                span = rule.find(folded)
        if span is None:
            continue
        detail = _excerpt(clean[span[0] : span[1]])
        if clean is not text:
            if offsets is None:
                clean = _clean_per_char(text)  # same text, with a position map
                offsets = _offsets(text)
                span = rule.find(clean) or span
            start, end = (
                offsets[min(span[0], len(offsets) - 1)],
                offsets[min(span[1], len(offsets) - 1)],
            )
            span = (start, max(end, start + 1))
        findings.append(ScanFinding(rule.category, detail, rule.id, rule.reason, span))
    blocking = _BLOCKING[kind] - ({"invisible_unicode"} if lenient else set())
    reasons = tuple(
        f"{f.category} ({f.rule}): {f.reason}; matched “{f.detail}”"
        for f in findings
        if f.category in blocking
    )
    return ScanResult(
        blocked=bool(reasons), reasons=reasons, findings=tuple(findings), kind=kind, text=stored
    )


def __getattr__(name: str) -> object:
    if name == "SCAN_RULES":  # loaded with the rule tables, on first use
        from herald.safety.scan_rules import SCAN_RULES

        return SCAN_RULES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SCAN_KINDS", "SCAN_RULES", "ScanFinding", "ScanResult", "scan_text", "strip_invisible"]
