"""`split_message`: boundaries, fences, markers and platform length units."""

from __future__ import annotations

import re

import pytest

from herald.gateway.splitting import _open_fence, split_message, utf16_length

MARKER = re.compile(r"\n\((\d+)/(\d+)\)$")


def _bodies(parts: list[str]) -> list[str]:
    return [MARKER.sub("", p) for p in parts]


def _check(parts: list[str], limit: int, measure=len) -> None:
    """Every part fits, carries its (i/N) marker, and closes any fence it opens."""
    assert parts
    for index, part in enumerate(parts, 1):
        assert measure(part) <= limit, (measure(part), limit, part)
        if len(parts) > 1:
            match = MARKER.search(part)
            assert match and match.groups() == (str(index), str(len(parts)))
        assert _open_fence(MARKER.sub("", part)) is None, f"part {index} leaves a fence open"


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("", 100, []),
        ("\n\n  \n", 100, []),
        ("short", 100, ["short"]),
        ("x" * 100, 100, ["x" * 100]),  # exactly the limit: one part, no marker
        ("\n\nhello\n\n", 100, ["hello"]),
    ],
)
def test_simple_cases(text: str, limit: int, expected: list[str]) -> None:
    assert split_message(text, limit) == expected


def test_paragraphs_come_before_lines() -> None:
    # a line break further on would fill the first part more; the paragraph end wins
    text = "A" * 20 + "\n\n" + "B" * 20 + "\n" + "C" * 20 + "\n" + "D" * 20
    parts = split_message(text, 60)
    _check(parts, 60)
    assert _bodies(parts)[0] == "A" * 20


def test_the_part_is_filled_up_to_the_last_paragraph_that_fits() -> None:
    text = "one\n\ntwo\n\nthree\n\n" + "four " * 20
    parts = split_message(text, 60)
    _check(parts, 60)
    assert _bodies(parts)[0] == "one\n\ntwo\n\nthree"


def test_lines_come_before_hard_cuts() -> None:
    text = "\n".join(f"line number {i:02d}" for i in range(20))
    parts = split_message(text, 80)
    _check(parts, 80)
    for body in _bodies(parts):
        assert all(re.fullmatch(r"line number \d\d", line) for line in body.split("\n"))


def test_a_single_huge_word_is_cut_hard() -> None:
    word = "a" * 1000
    parts = split_message(word, 100)
    _check(parts, 100)
    assert "".join(_bodies(parts)) == word


def test_words_are_kept_whole_when_a_line_is_too_long() -> None:
    text = " ".join(f"word{i}" for i in range(200))
    parts = split_message(text, 120)
    _check(parts, 120)
    assert " ".join(_bodies(parts)).split() == text.split()


def test_a_giant_code_block_is_closed_and_reopened_with_its_info_string() -> None:
    code = "\n".join(f"    value_{i} = compute({i})" for i in range(300))
    text = f"Here is the script:\n\n```python\n{code}\n```\n\nThat is all."
    parts = split_message(text, 500)
    _check(parts, 500)
    bodies = _bodies(parts)
    code_parts = [b for b in bodies if "value_" in b]
    assert len(code_parts) > 3
    for body in code_parts:
        assert "```python\n" in body
        assert body.endswith(("```", "```\n\nThat is all."))
    for body in code_parts[1:]:
        assert body.startswith("```python\n")  # reopened with the same info string
    # nothing lost: every code line appears exactly once
    lines = [line for b in bodies for line in b.split("\n") if "value_" in line]
    assert lines == code.split("\n")
    assert bodies[-1].endswith("That is all.")


def test_tilde_fences_and_longer_backtick_fences() -> None:
    code = "\n".join(f"line {i}" for i in range(100))
    for opener, closer in (("~~~text", "~~~"), ("````md", "````")):
        text = f"{opener}\n{code}\n{closer}"
        parts = split_message(text, 150)
        _check(parts, 150)
        for body in _bodies(parts):
            assert body.startswith(opener) and body.endswith(closer)


def test_a_block_ending_at_the_cut_is_not_reopened_empty() -> None:
    text = "```\n" + "\n".join("x" * 20 for _ in range(4)) + "\n```\n" + "tail " * 40
    parts = _bodies(split_message(text, 110))
    assert not any(p.startswith("```\n```") for p in parts)


def test_markers_count_towards_the_limit_even_with_many_parts() -> None:
    text = "\n\n".join(f"para {i} " + "z" * 30 for i in range(150))
    parts = split_message(text, 60)
    assert len(parts) >= 100  # three-digit markers
    _check(parts, 60)


def test_emoji_are_measured_in_utf16_units_and_never_split() -> None:
    text = "😀" * 300  # 600 UTF-16 code units
    parts = split_message(text, 100, utf16_length)
    _check(parts, 100, utf16_length)
    assert "".join(_bodies(parts)) == text


def test_combining_marks_and_zero_width_joiners_stay_with_their_character() -> None:
    family = "👨\u200d👩\u200d👧"
    accented = "e\u0301"
    text = (family + accented) * 60
    parts = split_message(text, 50, utf16_length)
    _check(parts, 50, utf16_length)
    for body in _bodies(parts):
        assert not body.startswith(("\u200d", "\u0301")) and not body.endswith("\u200d")
    assert "".join(_bodies(parts)) == text


def test_unicode_text_with_the_default_measure() -> None:
    text = "Ünïcödé paragraph. " * 50 + "\n\n" + "第二段。" * 100
    parts = split_message(text, 120)
    _check(parts, 120)
    assert re.sub(r"\s", "", "".join(_bodies(parts))) == re.sub(r"\s", "", text)


def test_a_limit_too_small_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        split_message("x" * 100, 10)
