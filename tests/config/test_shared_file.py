"""`update_shared_file`: lock + read + identity + transform + compare-and-swap + atomic
replace, exercised with real processes on real files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from herald.config.shared_file import (
    SharedFileConflict,
    SharedFileLockTimeout,
    lock_path_for,
    read_with_identity,
    shared_file_lock,
    update_shared_file,
)

# A writer process appending one line. "stall" pauses it after its read, right before
# its rename, until the parent says go (stdin); "unlocked" makes it skip the lock, as a
# lock that let two holders in would.
WRITER = """
import sys
from pathlib import Path
from herald.config.shared_file import update_shared_file

path, line, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
runs = []

def append(text):
    runs.append(text)
    return (text or "") + line + "\\n", None

def stall():
    if len(runs) == 1:  # only the first attempt waits; a retry goes straight on
        print("read", flush=True)
        sys.stdin.readline()

update_shared_file(
    path, append, lock=mode != "unlocked", before_replace=stall if mode == "stall" else None
)
print(f"transform runs {len(runs)}", flush=True)
"""

APPENDER = """
import sys
from pathlib import Path
from herald.config.shared_file import append_shared_file

path, who = Path(sys.argv[1]), sys.argv[2]
for n in range(5):
    # Records far larger than one buffered write, so an unlocked append could interleave.
    append_shared_file(path, f"<{who}-{n}>" + who * 200_000 + f"</{who}-{n}>\\n")
print("appended", flush=True)
"""

HOLDER = """
import sys
from pathlib import Path
from herald.config.shared_file import shared_file_lock

with shared_file_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
"""


def start(tmp_path: Path, source: str, *args: str) -> subprocess.Popen[str]:
    names = {WRITER: "writer.py", HOLDER: "holder.py", APPENDER: "appender.py"}
    script = tmp_path / names[source]
    # Written once: rewriting a script another process is starting on can hand it a
    # truncated file, which Python runs as an empty one and exits 0.
    if not script.exists():
        script.write_text(source, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str], stdin: str = "") -> str:
    out, err = process.communicate(stdin, timeout=60)
    assert process.returncode == 0, err
    return out


def test_a_write_based_on_a_stale_read_is_merged_again_not_lost(tmp_path):
    """Two holders at once: A reads and stalls before its rename; B, skipping the lock,
    writes meanwhile. A's compare-and-swap sees the file changed, re-reads and merges,
    so both lines survive (without the check, A's rename would drop B's line)."""
    path = tmp_path / "shared.txt"
    path.write_text("first\n", encoding="utf-8")
    a = start(tmp_path, WRITER, str(path), "from A", "stall")
    assert a.stdout is not None and a.stdout.readline().strip() == "read"

    b_out = finish(start(tmp_path, WRITER, str(path), "from B", "unlocked"))
    assert "transform runs 1" in b_out
    assert path.read_text(encoding="utf-8") == "first\nfrom B\n"

    a_out = finish(a, "go\n")
    assert "transform runs 2" in a_out  # the retry ran the transform on B's text
    assert path.read_text(encoding="utf-8") == "first\nfrom B\nfrom A\n"


def test_the_lock_excludes_another_process_until_it_lets_go(tmp_path):
    path = tmp_path / "shared.txt"
    holder = start(tmp_path, HOLDER, str(path))
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(SharedFileLockTimeout), shared_file_lock(path, timeout=0.2):
        pass
    finish(holder, "done\n")
    with shared_file_lock(path, timeout=5):
        pass
    assert lock_path_for(path).exists()  # the lock file stays, so every writer locks one inode


def test_many_processes_appending_lose_no_line(tmp_path):
    path = tmp_path / "shared.txt"
    writers = [start(tmp_path, WRITER, str(path), f"line {i}", "locked") for i in range(4)]
    for writer in writers:
        assert "transform runs" in finish(writer)
    assert sorted(path.read_text(encoding="utf-8").splitlines()) == [f"line {i}" for i in range(4)]


def test_appends_from_processes_stay_whole_records(tmp_path):
    path = tmp_path / "cron.log"
    appenders = [start(tmp_path, APPENDER, str(path), who) for who in "abc"]
    for appender in appenders:
        assert finish(appender).strip() == "appended"
    lines = path.read_text(encoding="utf-8").splitlines()
    expected = {f"<{w}-{n}>" + w * 200_000 + f"</{w}-{n}>" for w in "abc" for n in range(5)}
    assert len(lines) == 15 and set(lines) == expected


def test_a_missing_file_is_created_owner_only_and_an_existing_mode_is_kept(tmp_path):
    path = tmp_path / "new" / "notes.md"
    seen: list[str | None] = []

    def create(text: str | None) -> tuple[str, str]:
        seen.append(text)
        return "hello\n", "made"

    assert update_shared_file(path, create) == "made"
    assert seen == [None]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    os.chmod(path, 0o640)
    update_shared_file(path, lambda text: ((text or "") + "more\n", None))
    assert path.read_text(encoding="utf-8") == "hello\nmore\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_transform_that_returns_no_text_writes_nothing(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("keep\n", encoding="utf-8")
    before = read_with_identity(path)[1]
    assert update_shared_file(path, lambda text: (None, "no")) == "no"
    assert update_shared_file(path, lambda text: (text, "same")) == "same"
    assert read_with_identity(path)[1] == before
    assert not update_shared_file(tmp_path / "absent.md", lambda text: (None, False))
    assert not (tmp_path / "absent.md").exists()


def test_an_error_in_the_transform_leaves_the_file_and_no_temp_files(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("keep\n", encoding="utf-8")

    def refuse(text: str | None) -> tuple[str, None]:
        raise ValueError("not valid")

    with pytest.raises(ValueError):
        update_shared_file(path, refuse)
    assert path.read_text(encoding="utf-8") == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".notes.md.lock", "notes.md"]


def test_a_file_rewritten_on_every_attempt_is_a_conflict_not_a_silent_overwrite(tmp_path):
    """Something that rewrites the file between every read and rename (here the test
    itself, through the seam) never has its text overwritten: the caller gets an error."""
    path = tmp_path / "notes.md"
    path.write_text("0\n", encoding="utf-8")
    counter = iter(range(1, 1000))

    def someone_else_writes() -> None:
        path.write_text(f"{next(counter)}\n", encoding="utf-8")

    with pytest.raises(SharedFileConflict):
        update_shared_file(path, lambda text: ("mine\n", None), before_replace=someone_else_writes)
    assert path.read_text(encoding="utf-8") != "mine\n"


def test_the_identity_changes_with_an_in_place_rewrite_of_the_same_size(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("aaaa\n", encoding="utf-8")
    _, first = read_with_identity(path)
    with open(path, "r+b") as handle:  # same inode, same size; mtime may not move
        handle.write(b"bbbb")
        handle.flush()
        os.utime(handle.fileno(), ns=(first.mtime_ns, first.mtime_ns))
    _, second = read_with_identity(path)
    assert (second.inode, second.size, second.mtime_ns) == (first.inode, first.size, first.mtime_ns)
    assert second != first
