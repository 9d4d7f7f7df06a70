"""A plugin's storage file updated from several Herald processes at once keeps every update."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from herald.plugins.registration import PluginContext

PLUGIN_PROCESS = """
import json, sys
from pathlib import Path
from herald.plugins.registration import PluginContext

ctx = PluginContext(
    "notes", storage_root=Path(sys.argv[1]), config={}, secrets=None, hook_order=lambda: 0
)
who = sys.argv[2]
for n in range(10):
    def add(text, n=n):
        seen = json.loads(text) if text else []
        return json.dumps([*seen, f"{who}-{n}"]), None
    ctx.update_file("seen.json", add)
print("done", flush=True)
"""


def test_storage_updates_from_processes_are_all_kept(tmp_path):
    script = tmp_path / "plugin_process.py"
    script.write_text(PLUGIN_PROCESS, encoding="utf-8")
    root = tmp_path / "storage"
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), who],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in ("a", "b", "c")
    ]
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert out.strip() == "done", err
    seen = json.loads((root / "notes" / "seen.json").read_text(encoding="utf-8"))
    assert sorted(seen) == sorted(f"{w}-{n}" for w in "abc" for n in range(10))


def test_update_file_stays_inside_the_plugin_storage(tmp_path):
    ctx = PluginContext(
        "notes", storage_root=tmp_path, config={}, secrets=None, hook_order=lambda: 0
    )
    for bad in ("../other/x.json", "/etc/passwd", ""):
        with pytest.raises(ValueError):
            ctx.update_file(bad, lambda text: ("x", None))
    assert ctx.update_file("sub/x.json", lambda text: ("{}", text)) is None
    assert (tmp_path / "notes" / "sub" / "x.json").read_text(encoding="utf-8") == "{}"
