"""config.yaml edited from several processes at once (`herald config set` in a terminal,
"always allow" answered in the gateway, `herald plugins enable`): every edit survives."""

from __future__ import annotations

import subprocess
import sys

from herald.config import HeraldConfig, HeraldHome, load_config, update_raw

EDITOR = """
import sys
from pathlib import Path
from herald.config import HeraldConfig, HeraldHome, set_value
from herald.tools.terminal_approval import persist_always_pattern

home = HeraldHome(Path(sys.argv[1]))
kind, name, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
for n in range(count):
    if kind == "always":
        failure = persist_always_pattern(f"echo {name} {n}", HeraldConfig(), home)
        assert failure == "", failure
    elif kind == "model":
        set_value(home.config_path, "model.name", f"{name}-{n}")
    else:
        set_value(home.config_path, "agent.max_iterations", str(10 + n))
"""


def test_concurrent_config_edits_from_processes_are_all_kept(tmp_path):
    home = HeraldHome(tmp_path / "home")
    home.root.mkdir(parents=True)
    script = tmp_path / "editor.py"
    script.write_text(EDITOR, encoding="utf-8")
    jobs = [("always", "a"), ("always", "b"), ("model", "m"), ("iterations", "i")]
    editors = [
        subprocess.Popen(
            [sys.executable, str(script), str(home.root), kind, name, "8"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for kind, name in jobs
    ]
    for editor in editors:
        _, err = editor.communicate(timeout=120)
        assert editor.returncode == 0, err
    config = load_config(home.config_path)
    assert sorted(config.approvals.always_allow) == sorted(
        f"echo {name} {n}" for name in ("a", "b") for n in range(8)
    )
    assert config.model.name == "m-7"  # not an older value put back by a stale write
    assert config.agent.max_iterations == 17


def test_update_raw_writes_only_a_changed_valid_config(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("# my notes\nmodel:\n  name: kept\n", encoding="utf-8")
    assert update_raw(path, lambda data: data["model"]["name"]) == "kept"
    assert path.read_text(encoding="utf-8").startswith("# my notes")  # untouched: no change

    def bad(data: dict) -> None:
        data["agent"] = {"max_iterations": -3}

    try:
        update_raw(path, bad)
    except Exception as exc:  # ConfigError: invalid configs are never written
        assert "max_iterations" in str(exc)
    else:
        raise AssertionError("an invalid config was accepted")
    assert load_config(path) == HeraldConfig.model_validate({"model": {"name": "kept"}})
