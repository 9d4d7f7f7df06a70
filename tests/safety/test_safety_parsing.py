"""The tokenizer, normalisation, parser limits and blocked-script saving."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from herald.config import HeraldHome
from herald.safety import PARSER_LIMITS_RULE, analyze_command, check_command, save_blocked_script
from herald.safety.normalize import normalize_command
from herald.safety.shell_lex import parse, strip_comments


def _argvs(src: str, env: dict[str, str] | None = None) -> list[list[str]]:
    return [c.argv for c in parse(normalize_command(src), env=env).walk() if c.words]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("ls -la", [["ls", "-la"]]),
        ("r''m -rf x", [["rm", "-rf", "x"]]),
        ('r""m x', [["rm", "x"]]),
        ("r\\m x", [["rm", "x"]]),
        ("'a b' c", [["a b", "c"]]),
        ('"a $X b"', [["a $X b"]]),
        ('echo "a\\"b"', [["echo", 'a"b']]),
        ("a${IFS}b", [["a", "b"]]),
        ("a$IFS$9b", [["a", "b"]]),
        ('"a${IFS}b"', [["a b"]]),
        ("$'\\x41\\n'", [["A\n"]]),
        ("$'it\\'s'", [["it's"]]),
        ("x=1; echo $x", [["echo", "1"]]),
        ('echo $HOME ${HOME} "$HOME"', [["echo", "~", "~", "~"]]),
        ("{a,b}c", [["ac", "bc"]]),
        ("'{a,b}'", [["{a,b}"]]),
        ("a; b && c || d | e & f", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]),
        ("echo $(echo hi)", [["echo", "hi"], ["echo", "hi"]]),
        ("echo `echo hi`", [["echo", "hi"], ["echo", "hi"]]),
        ("if x; then y; fi", [["x"], ["y"]]),
        ("ls # a comment ; rm", [["ls"]]),
        ("echo a#b", [["echo", "a#b"]]),
        ("ｅｃｈｏ ｈｉ", [["echo", "hi"]]),
        ("\x1b[1mls\x1b[0m", [["ls"]]),
        ("l\x00s", [["ls"]]),
        ("l\u200bs", [["ls"]]),
        ("ls \\\n-la", [["ls", "-la"]]),
    ],
)
def test_words(src: str, expected: list[list[str]]) -> None:
    assert _argvs(src) == expected


def test_env_values_are_substituted() -> None:
    assert _argvs("echo $A ${B}", env={"A": "1", "B": "two words"}) == [
        ["echo", "1", "two", "words"]
    ]
    assert _argvs('echo "$B"', env={"B": "two words"}) == [["echo", "two words"]]
    assert _argvs("echo $UNSET") == [["echo", "$UNSET"]]


def test_redirects_and_heredocs() -> None:
    script = parse("cat <<'EOF' > out.txt 2>&1\nbody $(x)\nEOF\nls")
    cat, ls = script.commands
    ops = [(r.op, r.fd, r.target.text if r.target else None) for r in cat.redirects]
    assert ops == [("<<", "", "EOF"), (">", "", "out.txt"), (">&", "2", "1")]
    assert cat.redirects[0].heredoc == "body $(x)\n"
    assert ls.argv == ["ls"]
    # a quoted delimiter means no expansion: $(x) is not code
    assert not script.subscripts
    expanding = parse("cat <<EOF\n$(whoami)\nEOF")
    assert [c.argv for c in expanding.walk()] == [["cat"], ["whoami"]]


def test_pipeline_links() -> None:
    a, b, c = parse("a | b |& c; d").commands[:3]
    assert b.stdin_from is a and c.stdin_from is b and a.stdin_from is None


def test_strip_comments_keeps_quoted_hashes() -> None:
    assert strip_comments("ls # list\necho '#not' # yes") == "ls\necho '#not'"


def test_quoted_command_word_is_still_the_command() -> None:
    assert check_command("'reboot'").is_hardline
    assert check_command('"sh" -c "reboot"').is_hardline


def test_unterminated_quotes_do_not_hide_earlier_commands() -> None:
    assert check_command("rm -rf / 'unterminated").is_hardline
    assert check_command('echo "unterminated rm -rf /').level == "allow"


# -- parser limits ---------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo " + "a" * 128_001,
        "a" * 5000,  # over 4096 characters with no separator
        "x" * 4097,
        "ls;" * 2000,  # an absurd number of segments
        "echo " + "a " * 20_000 + ";",  # too many words
        "eval " * 12 + "ls",
        "$(" * 20 + "ls" + ")" * 20,
    ],
    ids=[
        "over-128k",
        "5000-no-separator",
        "4097-no-separator",
        "2000-segments",
        "20000-words",
        "nested-carriers",
        "nested-substitutions",
    ],
)
def test_parser_limits_are_hardline(command: str) -> None:
    verdict = check_command(command)
    assert verdict.level == "hardline"
    assert verdict.rule == PARSER_LIMITS_RULE
    assert "script" in verdict.description


def test_long_commands_with_separators_are_checked() -> None:
    long_heredoc = "cat <<'EOF' > big.txt\n" + "some text line\n" * 3000 + "EOF"
    assert len(long_heredoc) > 4096
    assert check_command(long_heredoc).level == "allow"
    assert check_command("echo " + "a" * 4000 + "; rm -rf /").rule == "hardline.delete_root"


def test_save_blocked_script(tmp_path: Path) -> None:
    home = HeraldHome(tmp_path / "home")
    command = "echo " + "a" * 5000
    path = save_blocked_script(command, home)
    assert path.parent == home.cache_dir / "blocked-scripts"
    assert path.suffix == ".sh"
    text = path.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert command in text
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = save_blocked_script("#!/bin/sh\nls", home)
    assert again.read_text() == "#!/bin/sh\nls\n"


def test_check_command_is_pure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    def no_io(*args: object, **kwargs: object) -> None:
        raise AssertionError("check_command must not do I/O")

    with monkeypatch.context() as patched:
        patched.setattr("builtins.open", no_io)
        patched.setattr(os, "listdir", no_io)
        patched.setattr(os, "scandir", no_io)
        patched.setattr(os, "stat", no_io)
        # the real HOME is not consulted: only ~, $HOME and env values are homes
        outside = check_command(f"rm -rf {tmp_path}")
        inside = check_command(f"rm -rf {tmp_path}", env={"HOME": str(tmp_path)})
    assert outside.level == "approval"
    assert inside.rule == "hardline.delete_home"


def test_analysis_reports_segments_and_compoundness() -> None:
    single = analyze_command("git push --force")
    assert not single.compound and single.segments == ("git push --force",)
    assert analyze_command("sudo git push --force").segments == (
        "sudo git push --force",
        "git push --force",
    )
    for compound in (
        "a && b",
        "a | b",
        "echo $(x)",
        "bash -c 'x'",
        "x > out.txt",
        "cat <<EOF\nx\nEOF",
    ):
        assert analyze_command(compound).compound, compound
    assert not analyze_command("make 2>/dev/null").compound
