"""One SKILL.md patched from several processes at once (the background reviewer of two
sessions, a CLI edit): every patch lands, none is overwritten by a stale read."""

from __future__ import annotations

import subprocess
import sys

from skill_support import skill_text, write_skill

from herald.config import Settings

PATCHER = """
import sys
from pathlib import Path
from herald.config import HeraldConfig, HeraldHome
from herald.skills import SkillLibrary, patch_skill

library = SkillLibrary(HeraldHome(Path(sys.argv[1])), HeraldConfig(), bundled_dir=Path(sys.argv[2]))
who, count = sys.argv[3], int(sys.argv[4])
for n in range(count):
    patch_skill(library, "shared-steps", f"- {who} {n}: todo", f"- {who} {n}: done")
print("patched", count, flush=True)
"""


def test_concurrent_patches_from_processes_all_land(settings: Settings, bundled, tmp_path):
    writers, count = ("p0", "p1", "p2"), 6
    body = "# Steps\n\n" + "".join(f"- {w} {n}: todo\n" for w in writers for n in range(count))
    write_skill(settings.home.skills_dir, "shared-steps", skill_text("shared-steps", body=body))
    script = tmp_path / "patcher.py"
    script.write_text(PATCHER, encoding="utf-8")  # once: see tests/memory/test_memory_processes
    patchers = [
        subprocess.Popen(
            [sys.executable, str(script), str(settings.home.root), str(bundled), w, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in writers
    ]
    for patcher in patchers:
        out, err = patcher.communicate(timeout=120)
        assert patcher.returncode == 0, err
        assert out.strip() == f"patched {count}", err
    text = (settings.home.skills_dir / "shared-steps" / "SKILL.md").read_text(encoding="utf-8")
    assert "todo" not in text
    assert all(f"- {w} {n}: done" in text for w in writers for n in range(count))
