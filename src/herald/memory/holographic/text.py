"""Text handling for the fact store: normalisation, content words, entities.

Entity extraction uses no model, only surface cues: capitalised words and
phrases ("Alice", "New York", "SQLite"), @handles, URLs and paths,
identifiers with dots or underscores (`config.yaml`, `max_tokens`), and
quoted terms. Entity names are stored normalised (case-folded, single
spaces, no surrounding punctuation or possessive 's).
"""

from __future__ import annotations

import re
import unicodedata

MAX_ENTITIES = 16
MAX_WORDS = 64
_MAX_ENTITY_CHARS = 80


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _wordset(
    """
    a about above after again against all also am an and any are aren't as at be because
    been before being below between both but by can can't could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's
    i i'd i'll i'm i've if in into is isn't it it's its itself just let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out
    over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's
    whom why why's will with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves
    please tell know remember think thing things something anything really much many
    like want get got use used using one s t
    """
)

# Capitalised only because they start a sentence: not entities on their own there.
SENTENCE_STARTERS = _wordset(
    """
    user users always never note remember prefer prefers use config configure set run
    ping ask call check make keep avoid send add remove update today yesterday tomorrow
    currently usually sometimes maybe yes ok okay hello hi thanks thank sure well now
    every everything nothing someone everyone people person meeting
    """
)

NEGATIONS = _wordset(
    """
    not no never none nobody nothing neither nor cannot can't don't doesn't didn't isn't
    aren't wasn't weren't won't wouldn't shouldn't couldn't hasn't haven't hadn't without
    stopped quit dislikes hates avoids
    """
)

# Scripts written without spaces between words (Thai/Lao/Khmer, CJK, Hangul, ...).
_UNSEGMENTED_RE = re.compile(
    "[\u0e00-\u0eff\u1780-\u17ff\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff]"
)

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NUMBER_RE = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?![\w])")
_SPACES_RE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.,;:!?()[]{}<>\"'`“”‘’«»"

_URL_RE = re.compile(r"\bhttps?://[^\s<>\"'`]+")
_HANDLE_RE = re.compile(r"(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?")
_PATH_RE = re.compile(r"(?<![\w/:.~-])(?:~|\.{1,2})?/?[\w.-]+(?:/[\w.-]+)+/?")
# A dotted name's parts are at most 64 characters: unbounded, a long run of "a-b-a-b"
# was read again after each dash (20,000 characters took 3.5 s).
_DOTTED_RE = re.compile(r"(?<![\w.])[A-Za-z_][\w-]{0,63}(?:\.[A-Za-z0-9_][\w-]{0,63})+")
# A word with an underscore, not after a dot, kept when `_underscored` (the two-way
# pattern it replaces, a letter and an underscore anywhere in it, tried every split of
# a long word).
_UNDERSCORED_WORD_RE = re.compile(r"(?<![\w.])\w*_\w*")
_ASCII_LETTER_RE = re.compile(r"[A-Za-z]")
_QUOTED_RES = (
    re.compile(r'"([^"\n]{2,60})"'),
    re.compile(r"“([^”\n]{2,60})”"),
    re.compile(r"`([^`\n]{1,60})`"),
    re.compile(r"(?<!\w)'([^'\n]{2,60})'(?!\w)"),
)
_CAP_WORD_RE = re.compile(r"[^\W\d_][\w'’+#-]*")
_POSSESSIVE_RE = re.compile(r"['’]s$")


def clean_text(text: str) -> str:
    """`text` with lone surrogates replaced (SQLite binds UTF-8 only)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def is_unsegmented(char: str) -> bool:
    return _UNSEGMENTED_RE.match(char) is not None


def has_unsegmented(text: str) -> bool:
    return _UNSEGMENTED_RE.search(text) is not None


def normalize_content(text: str) -> str:
    """The dedupe key: NFKC, case-folded, single spaces, no trailing punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES_RE.sub(" ", folded).strip().rstrip(".!?;,。！？ ").strip()


def normalize_entity(name: str) -> str:
    folded = _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", name).casefold()).strip()
    folded = folded.strip(_EDGE_PUNCT)
    for suffix in ("'s", "’s"):
        if folded.endswith(suffix):
            folded = folded[: -len(suffix)]
    return folded.strip(_EDGE_PUNCT)[:_MAX_ENTITY_CHARS]


def normalize_category(category: str | None) -> str:
    if category is None:
        return "general"
    folded = _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", category).casefold()).strip()
    return folded[:64] or "general"


def _split_unsegmented(token: str) -> list[str]:
    """Character bigrams of the unsegmented runs in `token`; other runs stay whole."""
    pieces: list[str] = []
    run = ""
    plain = ""
    for char in token + " ":
        if char != " " and is_unsegmented(char):
            if plain:
                pieces.append(plain)
                plain = ""
            run += char
            continue
        if run:
            pieces.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
            run = ""
        if char != " ":
            plain += char
    if plain:
        pieces.append(plain)
    return pieces


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens in order (unsegmented scripts as character bigrams)."""
    out: list[str] = []
    for match in _WORD_RE.finditer(unicodedata.normalize("NFKC", text).casefold()):
        word = match.group().replace("’", "'")
        if word.endswith("'s"):
            word = word[:-2]
        if has_unsegmented(word):
            out.extend(_split_unsegmented(word))
        else:
            out.append(word)
    return out


def content_words(text: str, limit: int = MAX_WORDS) -> list[str]:
    """Distinct tokens that carry meaning (stopwords and single letters dropped)."""
    seen: dict[str, None] = {}
    for token in tokens(text):
        if token in STOPWORDS or (len(token) < 2 and not has_unsegmented(token)):
            continue
        seen.setdefault(token, None)
        if len(seen) >= limit:
            break
    return list(seen)


def stem(word: str) -> str:
    """A crude suffix strip so that 'editors' meets 'editor' when comparing words."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def numbers(text: str) -> set[str]:
    return {match.group().replace(",", "") for match in _NUMBER_RE.finditer(text)}


def has_negation(text: str) -> bool:
    words = set(tokens(text))
    return bool(words & NEGATIONS) or "no longer" in text.casefold()


def _sentence_start(text: str, index: int) -> bool:
    before = text[:index].rstrip(" \t\"'“‘(*-")
    return not before or before[-1] in ".!?:\n"


def _capitalised_phrases(text: str) -> list[str]:
    phrases: list[tuple[str, bool]] = []
    current: list[str] = []
    current_start = 0
    previous_end = -1
    for match in _CAP_WORD_RE.finditer(text):
        word = match.group()
        capitalised = word[0].isupper()
        joined = bool(current) and text[previous_end : match.start()] == " "
        if capitalised and joined:
            current.append(word)
        else:
            if current:
                phrases.append((" ".join(current), _sentence_start(text, current_start)))
            current = [word] if capitalised else []
            current_start = match.start()
        previous_end = match.end()
    if current:
        phrases.append((" ".join(current), _sentence_start(text, current_start)))
    out: list[str] = []
    for phrase, at_start in phrases:
        words = phrase.split()
        if at_start and words and words[0].casefold() in SENTENCE_STARTERS:
            words.pop(0)
        # "The Herald Project" -> "Herald Project"; a lone "The"/"I"/"It" is no entity.
        while words and _POSSESSIVE_RE.sub("", words[0].casefold()) in STOPWORDS:
            words.pop(0)
        while words and words[-1].casefold() in STOPWORDS:
            words.pop()
        if words:
            out.append(" ".join(words))
    return out


def _plausible_path(candidate: str) -> bool:
    if candidate.startswith(("/", "~", ".")) or candidate.count("/") >= 2:
        return True
    return "." in candidate.rsplit("/", 1)[-1]  # ends in a file name


def _underscored(word: str) -> bool:
    """snake_case names and _private ones: an ASCII letter, then an underscore with
    something after it; or an underscore first and a letter after it."""
    letter = _ASCII_LETTER_RE.search(word)
    if letter is None:
        return False
    if word[0] == "_":
        return True
    return "_" in word[letter.end() : -1]


def extract_entities(text: str, explicit: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Normalised entity names in `text` (explicit ones first), at most MAX_ENTITIES."""
    found: list[str] = list(explicit)
    taken = bytearray(len(text))  # 1 where an entity found earlier lies
    spans: list[tuple[int, int]] = []

    def grab(pattern: re.Pattern[str], *, group: int = 0, check=None) -> None:
        for match in pattern.finditer(text):
            start, end = match.span(group)
            if 1 in taken[start:end]:
                continue
            value = match.group(group).rstrip(".,;:!?)")
            if check is not None and not check(value):
                continue
            found.append(value)
            taken[start:end] = b"\1" * (end - start)
            spans.append((start, end))

    grab(_URL_RE)
    grab(_HANDLE_RE)
    grab(_PATH_RE, check=_plausible_path)
    for quoted in _QUOTED_RES:
        grab(quoted, group=1)
    grab(_DOTTED_RE, check=lambda v: any(len(part) > 1 for part in v.split(".")))
    grab(_UNDERSCORED_WORD_RE, check=_underscored)
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    remainder = "".join(chars)
    found.extend(_capitalised_phrases(remainder))
    out: dict[str, None] = {}
    for raw in found:
        name = normalize_entity(raw)
        if name and any(char.isalnum() for char in name) and name not in STOPWORDS:
            out.setdefault(name, None)
        if len(out) >= MAX_ENTITIES:
            break
    return list(out)
