"""Built-in memory shared by real processes: the file lock and the clobber guard hold
across process boundaries, not just between objects of one process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memory_support import home_settings

from herald.config.schema_memory import MemoryConfig
from herald.memory import BuiltinMemory, parse_entries

WRITER = """
import sys
from pathlib import Path
from herald.config import HeraldHome
from herald.config.schema_memory import MemoryConfig
from herald.memory import BuiltinMemory, MemoryFiles

home = HeraldHome(Path(sys.argv[1]))
memory = BuiltinMemory(home, MemoryConfig(memory_char_limit=100_000))
action = sys.argv[2]
stalls = []

def stall():
    # Pause once, after the read and right before the rename, until the parent says go.
    if not stalls:
        stalls.append(1)
        print("read", flush=True)
        sys.stdin.readline()

if action == "add-stalled":
    memory.files = MemoryFiles(home.memories_dir, before_replace=stall)
elif action == "add-unlocked":  # as if the lock had let a second holder in
    memory.files = MemoryFiles(home.memories_dir, lock=False)
if action in ("add-stalled", "add-unlocked"):
    result = memory.add("memory", sys.argv[3])
    assert result.success and result.changed, result.message
    print(result.message, flush=True)
if action == "add-many":
    for n in range(int(sys.argv[4])):
        result = memory.add("memory", f"{sys.argv[3]} note {n}")
        assert result.success, result.message
    print("added", sys.argv[4], flush=True)
elif action == "replace":
    memory.entries("memory")
    result = memory.replace("memory", sys.argv[3], sys.argv[4])
    assert result.success, result.message
"""


def run_writer(tmp_path: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    # Written once: rewriting it for the next writer truncates it while an earlier one
    # may be starting, and Python runs a truncated script as an empty one and exits 0
    # having added nothing (issue 38: one writer's 15 entries "lost", all writers fine).
    if not script.exists():
        script.write_text(WRITER, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), str(home), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_concurrent_processes_lose_no_entries(tmp_path):
    settings = home_settings(tmp_path)
    writers = [
        run_writer(tmp_path, settings.home.root, "add-many", f"proc{i}", "15") for i in range(3)
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
        assert out.strip() == "added 15", err  # it ran the script, not an empty file
    text = (settings.home.memories_dir / "MEMORY.md").read_text(encoding="utf-8")
    entries = parse_entries(text)
    assert len(entries) == 45
    assert {f"proc{i} note {n}" for i in range(3) for n in range(15)} == set(entries)


def test_two_writers_inside_the_lock_at_once_still_lose_no_entry(tmp_path):
    """The stale-read case, forced: A reads MEMORY.md under its lock and stalls before
    the rename; B, whose lock is skipped, adds its entry meanwhile. A's compare-and-swap
    sees the file is no longer the one it read and merges again, so both entries stay."""
    settings = home_settings(tmp_path)
    memory = BuiltinMemory(settings.home, MemoryConfig())
    assert memory.add("memory", "Release day is Tuesday").success
    root = settings.home.root
    a = run_writer(tmp_path, root, "add-stalled", "The build server is ci-3")
    assert a.stdout is not None and a.stdout.readline().strip() == "read"
    b = run_writer(tmp_path, root, "add-unlocked", "Backups run at 02:00")
    _, err = b.communicate(timeout=60)
    assert b.returncode == 0, err

    out, err = a.communicate("go\n", timeout=60)
    assert a.returncode == 0, err
    assert out.strip() == "entry added"
    path = settings.home.memories_dir / "MEMORY.md"
    assert parse_entries(path.read_text(encoding="utf-8")) == [
        "Release day is Tuesday",
        "Backups run at 02:00",
        "The build server is ci-3",
    ]


def test_another_process_editing_the_target_entry_is_not_clobbered(tmp_path):
    settings = home_settings(tmp_path)
    memory = BuiltinMemory(settings.home, MemoryConfig())
    assert memory.add("memory", "Release day is Tuesday").success
    other = run_writer(
        tmp_path, settings.home.root, "replace", "Tuesday", "Release day is Thursday"
    )
    _, err = other.communicate(timeout=60)
    assert other.returncode == 0, err

    result = memory.replace("memory", "Release day", "Release day is Monday")
    assert not result.success and "Thursday" in result.message
    path = settings.home.memories_dir / "MEMORY.md"
    assert parse_entries(path.read_text(encoding="utf-8")) == ["Release day is Thursday"]
    assert (settings.home.memories_dir / "MEMORY.md.bak").read_text(encoding="utf-8") == (
        "Release day is Thursday\n"
    )
