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
from herald.memory import BuiltinMemory

home = HeraldHome(Path(sys.argv[1]))
memory = BuiltinMemory(home, MemoryConfig(memory_char_limit=100_000))
action = sys.argv[2]
if action == "add-many":
    for n in range(int(sys.argv[4])):
        result = memory.add("memory", f"{sys.argv[3]} note {n}")
        assert result.success, result.message
elif action == "replace":
    memory.entries("memory")
    result = memory.replace("memory", sys.argv[3], sys.argv[4])
    assert result.success, result.message
"""


def run_writer(tmp_path: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), str(home), *args],
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
        _, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
    text = (settings.home.memories_dir / "MEMORY.md").read_text(encoding="utf-8")
    entries = parse_entries(text)
    assert len(entries) == 45
    assert {f"proc{i} note {n}" for i in range(3) for n in range(15)} == set(entries)


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
