"""read_file and write_file through a real local environment in tmp_path."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from test_file_support import call, err, make_ctx, make_registry, ok

from herald.tools.file_read import DEFAULT_LIMIT, MAX_OUTPUT_CHARS
from herald.tools.registry import ToolContext


@pytest.fixture
def reg():
    return make_registry()


@pytest.fixture
def ctx(tmp_path: Path):
    return make_ctx(tmp_path)


def write_lines(path: Path, count: int, width: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"line {i}{'x' * width}\n" for i in range(1, count + 1)))


# ------------------------------------------------------------------ read_file


def test_read_numbers_lines_and_shows_whole_small_file(reg, ctx, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n  beta\n\ngamma")
    out = ok(call(reg, ctx, "read_file", path="a.txt"))
    assert out == "1: alpha\n2:   beta\n3: \n4: gamma"


def test_read_offset_and_limit_page_with_exact_continuation(reg, ctx, tmp_path):
    write_lines(tmp_path / "big.txt", 1000)
    out = ok(call(reg, ctx, "read_file", path="big.txt", offset=5, limit=10))
    lines = out.split("\n")
    assert lines[0] == "5: line 5" and lines[9] == "14: line 14"
    assert "lines 5-14 of 1000" in lines[10] and "offset=15" in lines[10]


def test_read_default_limit_and_end_of_file_note(reg, ctx, tmp_path):
    write_lines(tmp_path / "big.txt", 1000)
    first = ok(call(reg, ctx, "read_file", path="big.txt"))
    assert f"{DEFAULT_LIMIT}: line {DEFAULT_LIMIT}" in first
    assert f"offset={DEFAULT_LIMIT + 1}" in first
    last = ok(call(reg, ctx, "read_file", path="big.txt", offset=990))
    assert last.startswith("990: line 990") and "1000: line 1000" in last
    assert "end of file" in last and "offset=" not in last


def test_read_offset_past_end_is_an_error(reg, ctx, tmp_path):
    write_lines(tmp_path / "f.txt", 3)
    assert "past the end" in err(call(reg, ctx, "read_file", path="f.txt", offset=9))


def test_read_caps_characters_and_still_says_where_to_continue(reg, ctx, tmp_path):
    write_lines(tmp_path / "wide.txt", 300, width=1000)
    out = ok(call(reg, ctx, "read_file", path="wide.txt"))
    assert len(out) < MAX_OUTPUT_CHARS + 500
    shown = [line for line in out.split("\n") if line[:1].isdigit()]
    assert 10 < len(shown) < 300
    assert f"offset={len(shown) + 1}" in out


def test_read_cuts_very_long_lines(reg, ctx, tmp_path):
    (tmp_path / "min.js").write_text("x" * 10_000 + "\nshort\n")
    out = ok(call(reg, ctx, "read_file", path="min.js"))
    assert "[line cut: 10,000 chars]" in out and "2: short" in out


def test_read_crlf_lines_without_carriage_returns(reg, ctx, tmp_path):
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    assert ok(call(reg, ctx, "read_file", path="win.txt")) == "1: one\n2: two"


def test_read_empty_file(reg, ctx, tmp_path):
    (tmp_path / "empty").write_text("")
    assert "empty" in ok(call(reg, ctx, "read_file", path="empty"))


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("pic.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "PNG image"),
        ("blob.bin", b"abc\x00def" * 10, "binary"),
        ("latin.txt", "café naïve".encode("latin-1"), "not valid UTF-8"),
        ("doc.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\x00", "PDF document"),
    ],
)
def test_read_refuses_binary_with_a_clear_message(reg, ctx, tmp_path, name, data, expected):
    (tmp_path / name).write_bytes(data)
    message = err(call(reg, ctx, "read_file", path=name))
    assert "binary file" in message and expected in message and "terminal" in message


def test_read_missing_file_suggests_close_names(reg, ctx, tmp_path):
    (tmp_path / "config.yaml").write_text("a: 1\n")
    (tmp_path / "notes.md").write_text("x\n")
    message = err(call(reg, ctx, "read_file", path="config.yml"))
    assert "does not exist" in message and "config.yaml" in message


def test_read_missing_directory(reg, ctx):
    message = err(call(reg, ctx, "read_file", path="nope/deeper/file.txt"))
    assert "does not exist" in message and "search_files" in message


def test_read_directory_lists_a_few_entries(reg, ctx, tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "mod.py").write_text("")
    message = err(call(reg, ctx, "read_file", path="pkg"))
    assert "is a directory" in message and "mod.py" in message and "sub/" in message


def _in_a_thread(fn):  # type: ignore[no-untyped-def]
    """fn() on a thread, given 20 s: opening a named pipe used to wait for a writer
    forever, which would hang the test run instead of failing this test."""
    box: dict = {}
    thread = threading.Thread(target=lambda: box.setdefault("out", fn()), daemon=True)
    thread.start()
    thread.join(20)
    assert "out" in box, "still waiting on the pipe"
    return box["out"]


def test_a_named_pipe_is_refused_not_waited_on(reg, ctx, tmp_path):
    # `mkfifo` in the terminal, or a FIFO a tar archive unpacked as README.md: reading
    # it waited for a writer that never comes, and the turn with it.
    os.mkfifo(tmp_path / "README.md")
    (tmp_path / "link.md").symlink_to(tmp_path / "README.md")
    for path in ("README.md", "link.md", "/dev/null"):
        message = err(_in_a_thread(lambda path=path: call(reg, ctx, "read_file", path=path)))
        assert "is not a regular file but a named pipe, socket or device" in message, path
    patched = _in_a_thread(
        lambda: call(reg, ctx, "patch", path="README.md", old_text="a", new_text="b")
    )
    assert "not a regular file" in err(patched)
    searched = _in_a_thread(lambda: call(reg, ctx, "search_files", pattern="x", path="link.md"))
    assert "link.md is not a regular file" in err(searched)  # ripgrep waited 60 s on it


def test_read_absolute_path_and_utf8_bom(reg, ctx, tmp_path):
    target = tmp_path / "bom.txt"
    target.write_bytes(b"\xef\xbb\xbfhello\n")
    assert ok(call(reg, ctx, "read_file", path=str(target))) == "1: hello"


def test_read_without_environment_is_a_clear_error(reg):
    assert "no execution environment" in err(call(reg, ToolContext(), "read_file", path="x"))


def test_read_bad_offset_type(reg, ctx, tmp_path):
    write_lines(tmp_path / "f.txt", 3)
    assert "offset" in err(call(reg, ctx, "read_file", path="f.txt", offset=0))


# ------------------------------------------------------------------ write_file


def test_write_creates_file_and_parent_directories(reg, ctx, tmp_path):
    out = ok(call(reg, ctx, "write_file", path="new/deep/file.txt", content="a\nb\n"))
    assert out.startswith("Created new/deep/file.txt") and "4 bytes, 2 lines" in out
    assert (tmp_path / "new" / "deep" / "file.txt").read_text() == "a\nb\n"


def test_write_replaces_and_reports_previous_size(reg, ctx, tmp_path):
    (tmp_path / "f.txt").write_text("old content\n")
    out = ok(call(reg, ctx, "write_file", path="f.txt", content="né\n"))
    assert out.startswith("Replaced f.txt") and "4 bytes" in out and "was 12 bytes" in out
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "né\n"


def test_write_is_atomic_and_leaves_no_temporary_files(reg, ctx, tmp_path):
    target = tmp_path / "data.json"
    target.write_text("{}")
    inode = os.stat(target).st_ino
    ok(call(reg, ctx, "write_file", path="data.json", content='{"a": 1}'))
    assert target.read_text() == '{"a": 1}'
    assert os.stat(target).st_ino != inode  # replaced by rename, never rewritten in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.json"]


def test_write_refuses_a_directory_path(reg, ctx, tmp_path):
    (tmp_path / "dir").mkdir()
    assert "is a directory" in err(call(reg, ctx, "write_file", path="dir", content="x"))
    assert "not a directory" in err(call(reg, ctx, "write_file", path="other/", content="x"))
    assert list((tmp_path / "dir").iterdir()) == []


def test_write_empty_content_and_bad_content_type(reg, ctx, tmp_path):
    assert "0 bytes, 0 lines" in ok(call(reg, ctx, "write_file", path="e.txt", content=""))
    message = err(call(reg, ctx, "write_file", path="j.txt", content={"a": 1}))
    assert "content must be a string" in message
    assert "content is required" in err(call(reg, ctx, "write_file", path="j.txt"))


def test_write_then_read_round_trip(reg, ctx):
    ok(call(reg, ctx, "write_file", path="r.py", content="def f():\n    return 1\n"))
    assert ok(call(reg, ctx, "read_file", path="r.py")) == "1: def f():\n2:     return 1"
