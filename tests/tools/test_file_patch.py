"""patch: exact find/replace and unified-diff mode, through a real local environment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_file_support import call, err, make_ctx, make_registry, ok

from herald.tools.file_diff import DiffError, apply_unified_diff, parse_unified_diff

SOURCE = """\
import os


def greet(name):
    message = "hello " + name
    print(message)
    return message


def farewell(name):
    message = "bye " + name
    print(message)
    return message
"""


@pytest.fixture
def reg():
    return make_registry()


@pytest.fixture
def ctx(tmp_path: Path):
    return make_ctx(tmp_path)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "mod.py"
    path.write_text(SOURCE)
    return path


# ------------------------------------------------------------------ find/replace


def test_unique_replace_edits_and_previews(reg, ctx, src):
    out = ok(
        call(reg, ctx, "patch", path="mod.py", old_text='"hello " + name', new_text='f"hi {name}"')
    )
    assert out.startswith("Patched mod.py: replaced 1 match at line 5 (+1 -1 lines)")
    assert '-    message = "hello " + name' in out and '+    message = f"hi {name}"' in out
    assert 'message = f"hi {name}"' in src.read_text()


def test_missing_text_returns_closest_candidates(reg, ctx, src):
    message = err(
        call(
            reg,
            ctx,
            "patch",
            path="mod.py",
            old_text='def greet(nam):\n    message = "helo " + nam',
            new_text="x",
        )
    )
    assert "was not found" in message and "Closest candidates" in message
    assert "lines 4-5" in message and '5:     message = "hello " + name' in message
    assert src.read_text() == SOURCE


def test_whitespace_only_difference_is_named(reg, ctx, src):
    message = err(
        call(
            reg,
            ctx,
            "patch",
            path="mod.py",
            old_text="def greet(name):\n  message = ",
            new_text="x",
        )
    )
    assert (
        "when whitespace" in message and "lines 4-5" in message and "4: def greet(name):" in message
    )


def test_nothing_similar_says_so(reg, ctx, src):
    message = err(call(reg, ctx, "patch", path="mod.py", old_text="qqqqqqqqqqqq", new_text="x"))
    assert "nothing similar" in message


def test_non_unique_match_lists_every_line(reg, ctx, src):
    message = err(
        call(reg, ctx, "patch", path="mod.py", old_text="    print(message)", new_text="    pass")
    )
    assert "matches 2 places" in message and "lines 6, 12" in message
    assert "more surrounding lines" in message
    assert src.read_text() == SOURCE


def test_replace_all(reg, ctx, src):
    out = ok(
        call(
            reg,
            ctx,
            "patch",
            path="mod.py",
            old_text="print(message)",
            new_text="log(message)",
            replace_all=True,
        )
    )
    assert "replaced 2 matches at lines 6, 12" in out
    assert src.read_text().count("log(message)") == 2


def test_argument_errors(reg, ctx, src):
    assert "either" in err(
        call(reg, ctx, "patch", path="mod.py", old_text="a", new_text="b", diff="x")
    )
    assert "give old_text" in err(call(reg, ctx, "patch", path="mod.py"))
    assert "new_text is required" in err(call(reg, ctx, "patch", path="mod.py", old_text="import"))
    assert "identical" in err(call(reg, ctx, "patch", path="mod.py", old_text="os", new_text="os"))
    assert "write_file" in err(call(reg, ctx, "patch", path="mod.py", old_text="", new_text="x"))
    assert "does not exist" in err(
        call(reg, ctx, "patch", path="nope.py", old_text="a", new_text="b")
    )


def test_crlf_and_bom_are_preserved(reg, ctx, tmp_path):
    path = tmp_path / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    ok(call(reg, ctx, "patch", path="win.txt", old_text="one\ntwo", new_text="one\n2"))
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\n2\r\nthree\r\n"


def test_binary_file_is_refused(reg, ctx, tmp_path):
    (tmp_path / "x.bin").write_bytes(b"\x00\x01\x02")
    assert "binary file" in err(call(reg, ctx, "patch", path="x.bin", old_text="a", new_text="b"))


# ------------------------------------------------------------------ unified diff


DIFF_EXACT = """\
--- a/mod.py
+++ b/mod.py
@@ -4,4 +4,4 @@
 def greet(name):
-    message = "hello " + name
+    message = "hi " + name
     print(message)
     return message
"""


def test_diff_applies(reg, ctx, src):
    out = ok(call(reg, ctx, "patch", path="mod.py", diff=DIFF_EXACT))
    assert "applied 1 hunk (+1 -1 lines)" in out and "offsets" not in out
    assert src.read_text() == SOURCE.replace('"hello "', '"hi "')


def test_diff_hunk_with_wrong_line_numbers_applies_nearby(reg, ctx, src):
    diff = """\
@@ -7,3 +7,4 @@
 def farewell(name):
     message = "bye " + name
+    message = message.upper()
     print(message)
"""
    out = ok(call(reg, ctx, "patch", path="mod.py", diff=diff))
    assert "hunk 1 at line 10 (header said 7)" in out
    lines = src.read_text().split("\n")
    assert lines[11] == "    message = message.upper()"


def test_diff_with_two_hunks_and_blank_context_lines(reg, ctx, src):
    # The blank context lines between functions arrive without their leading space.
    diff = (
        "@@ -1,4 +1,5 @@\n import os\n+import sys\n\n\n def greet(name):\n"
        "@@ -13,2 +14,2 @@\n     print(message)\n-    return message\n+    return None\n"
    )
    ok(call(reg, ctx, "patch", path="mod.py", diff=diff))
    text = src.read_text()
    assert text.startswith("import os\nimport sys\n") and text.endswith("    return None\n")
    assert text.count("return message") == 1


def test_failing_hunk_names_the_hunk_and_line_and_changes_nothing(reg, ctx, src):
    diff = DIFF_EXACT + (
        "@@ -10,4 +10,4 @@\n def farewell(name):\n-    message = 'ciao ' + name\n"
        "+    message = 'bye!'\n     print(message)\n"
    )
    message = err(call(reg, ctx, "patch", path="mod.py", diff=diff))
    assert "hunk 2 (@@ -10,4 +10,4 @@) does not apply" in message
    assert "line 11 is" in message and "'ciao ' + name" in message
    assert "file unchanged" in message
    assert src.read_text() == SOURCE


def test_ambiguous_far_hunk_is_refused(reg, ctx, tmp_path):
    path = tmp_path / "rep.txt"
    path.write_text("a\nx\nb\n" + "filler\n" * 40 + "a\nx\nb\n" + "filler\n" * 40 + "a\nx\nb\n")
    diff = "@@ -20,3 +20,3 @@\n a\n-x\n+y\n b\n"
    message = err(call(reg, ctx, "patch", path="rep.txt", diff=diff))
    assert "ambiguous" in message and "lines 1, 44, 87" in message


def test_unique_far_hunk_applies(reg, ctx, src):
    diff = '@@ -100,2 +100,2 @@\n def farewell(name):\n-    message = "bye " + name\n+    message = "ciao " + name\n'
    out = ok(call(reg, ctx, "patch", path="mod.py", diff=diff))
    assert "hunk 1 at line 10 (header said 100)" in out and '"ciao "' in src.read_text()


def test_diff_creates_content_in_empty_file(reg, ctx, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    ok(call(reg, ctx, "patch", path="empty.txt", diff="@@ -0,0 +1,2 @@\n+first\n+second\n"))
    assert (tmp_path / "empty.txt").read_text() == "first\nsecond\n"


def test_no_newline_markers():
    text = "a\nb"
    diff = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
    assert apply_unified_diff(text, diff)[0] == "a\nc\n"
    diff = "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"
    assert apply_unified_diff("a\nb\n", diff)[0] == "a\nc"


@pytest.mark.parametrize(
    ("diff", "expected"),
    [
        ("just some text", "no hunks"),
        ("@@ -1,1 +1,1 @@\n a\n", "no '-' or '+' lines"),
        ("@@ -1,1 +1,1 @@\n-a\n?b\n", "does not start with"),
        (
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
            "2 files",
        ),
        ("*** Begin Patch\n*** Update File: x\n", "not a unified diff"),
    ],
)
def test_diff_parse_errors(diff, expected):
    with pytest.raises(DiffError, match=re.escape(expected)):
        parse_unified_diff(diff)


def test_hunk_without_line_numbers_needs_a_unique_context():
    assert apply_unified_diff("a\nb\nc\n", "@@ @@\n b\n+x\n c\n")[0] == "a\nb\nx\nc\n"
    with pytest.raises(DiffError, match="only adds lines"):
        apply_unified_diff("a\n", "@@ @@\n+x\n")
    with pytest.raises(DiffError, match="none of its context"):
        apply_unified_diff("a\nb\n", "@@ @@\n zzz\n+x\n")


def test_trailing_whitespace_in_context_is_tolerated_and_kept():
    result, _ = apply_unified_diff("keep  \nold\n", "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n")
    assert result == "keep  \nnew\n"


def test_candidates_do_not_overlap_and_skip_noise():
    from herald.tools.file_patch import closest_candidates

    text = "alpha one\nalpha two\nbeta\n" + "unrelated filler\n" * 20 + "alpha one\nalpha tw0\n"
    picked = closest_candidates(text, "alpha one\nalpha 2")
    firsts = [first for first, _, _ in picked]
    assert firsts[:2] in ([1, 24], [24, 1])
    assert all(abs(a - b) >= 2 for a in firsts for b in firsts if a != b)


def _counting_ratio(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts difflib's character-by-character comparisons (each grows with the product
    of the two lengths: 40 lines against every window of a long file took 200 s)."""
    import difflib

    calls: list[int] = []
    real = difflib.SequenceMatcher.ratio

    def ratio(self: difflib.SequenceMatcher) -> float:
        calls.append(len(self.a) * len(self.b))
        return real(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", ratio)
    return calls


def test_a_long_near_miss_in_a_long_file_is_found_with_few_comparisons(monkeypatch):
    from herald.tools.file_patch import PAIR_LIMIT, SHORTLIST, closest_candidates

    lines = [
        f"    value_{i} = compute(table[{i}], weight={i % 7})  # step {i}" for i in range(3000)
    ]
    text = "\n".join(lines)
    stale = lines[1200:1240]
    stale[20] = stale[20].replace("compute", "calculate")  # the model remembered it wrong
    calls = _counting_ratio(monkeypatch)
    picked = closest_candidates(text, "\n".join(stale))
    assert picked and picked[0][0] == 1201 and picked[0][1] > 0.9
    assert len(calls) <= SHORTLIST and all(size <= PAIR_LIMIT for size in calls)


def test_a_near_miss_in_a_minified_file_is_not_compared_character_by_character(monkeypatch):
    from herald.tools.file_patch import closest_candidates

    bundle = "".join(f"function f{i}(a){{return a*{i}+g(a,{i})}};" for i in range(8000))
    old = bundle[100_000:160_000].replace("return", "retrun", 1)
    calls = _counting_ratio(monkeypatch)
    assert closest_candidates(bundle, old) == []  # 265 KB on one line is not like 60 KB
    first, score, _ = closest_candidates(bundle, bundle.replace("return", "retrun", 1))[0]
    assert first == 1 and score > 0.99
    assert calls == []  # 265,000 x 60,000 characters: never compared one by one
