"""The control plane through the tools (issue 26 part A): the file tools judge Herald's
control files and secrets like the terminal does, and the attended approve-callback
path asks for an admin command but never lets a human, ``approvals.mode: off`` or an
``always_allow`` pattern through to a posture change; a sub-agent is never asked."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest
from test_terminal_support import SECRET_NAME, SECRET_VALUE, FakeHuman, make_harness

from herald.safety.control_plane import PACKAGE_DIR
from herald.tools import file_tools
from herald.tools.search_files import register as register_search

# The owner set approvals off and allows everything: none of it may reach the control plane.
LOOSE = {"approvals": {"mode": "off", "always_allow": ["*"]}}


def harness(tmp_path: Path, human: FakeHuman | None, config=LOOSE):
    h = make_harness(tmp_path, config, approve=human)
    file_tools.register(h.registry)
    register_search(h.registry)
    return h


def seed_home(home: Path) -> None:
    for rel in ("plugins", "cron", "memories", "skills/x", "web", "gateway", "profiles/work"):
        (home / rel).mkdir(parents=True, exist_ok=True)
    (home / "web" / "token.json").write_text('{"hash": "abc"}\n')
    (home / "gateway" / "pairing.json").write_text("{}\n")
    (home / "memories" / "MEMORY.md").write_text("likes tea\n")
    (home / "skills" / "x" / "SKILL.md").write_text("# x\n")
    (home / "profiles" / "work" / "config.yaml").write_text("model: {}\n")


WRITES = [  # (tool, path relative to the home, rule)
    ("write_file", "config.yaml", "control.file_write"),
    ("patch", "config.yaml", "control.file_write"),
    ("write_file", ".env", "control.file_write"),
    ("patch", ".env", "control.file_write"),
    ("write_file", "plugins/evil/__init__.py", "control.file_write"),
    ("write_file", "cron/jobs.json", "control.file_write"),
    ("write_file", "profiles/work/config.yaml", "control.file_write"),
    ("write_file", "profiles/work/.env", "control.file_write"),
    ("write_file", "web/token.json", "control.file_write"),
    ("write_file", "gateway/pairing.json", "control.file_write"),
    ("write_file", "SOUL.md", "control.file_write"),
    ("write_file", "state.db", "control.file_write"),
    ("write_file", "memories/MEMORY.md", "control.memory_side_door"),
    ("patch", "memories/MEMORY.md", "control.memory_side_door"),
    ("write_file", "memories/USER.md", "control.memory_side_door"),
    ("write_file", "skills/x/SKILL.md", "control.memory_side_door"),
    ("patch", "skills/x/SKILL.md", "control.memory_side_door"),
    ("write_file", "skills/evil/SKILL.md", "control.memory_side_door"),
]


@pytest.mark.parametrize(("tool", "rel", "rule"), WRITES)
def test_file_tool_writes_to_the_control_plane_are_refused(tmp_path, tool, rel, rule):
    human = FakeHuman(["always"] * 3)
    h = harness(tmp_path, human)
    home = h.settings.home.root
    seed_home(home)
    target = home / rel
    before = target.read_bytes() if target.exists() else None
    if tool == "patch":
        old = target.read_text().splitlines()[0]
        message = h.error("patch", path=str(target), old_text=old, new_text="approvals: off")
    else:
        message = h.error("write_file", path=str(target), content="approvals: {mode: 'off'}\n")
    assert f"[{rule}]" in message, message
    assert (target.read_bytes() if target.exists() else None) == before
    assert human.prompts == []  # never even asked
    h.close()


def test_writing_herald_code_is_refused(tmp_path):
    h = harness(tmp_path, FakeHuman(["once"]))
    target = Path(PACKAGE_DIR) / "safety" / "_control_plane_probe.py"
    try:
        message = h.error("write_file", path=str(target), content="ALLOW = True\n")
        assert "[control.herald_code]" in message and not target.exists()
    finally:
        target.unlink(missing_ok=True)
        h.close()


def test_a_symlink_planted_in_the_workdir_is_judged_by_its_target(tmp_path):
    h = harness(tmp_path, FakeHuman(["once"]))
    home = h.settings.home.root
    config, env = home / "config.yaml", home / ".env"
    before = config.read_bytes()
    os.symlink(config, h.work / "settings.yaml")
    os.symlink(env, h.work / "notes.txt")
    message = h.error("write_file", path="settings.yaml", content="approvals: {mode: 'off'}\n")
    assert "[control.file_write]" in message and config.read_bytes() == before
    assert "[control.secret_read]" in h.error("read_file", path="notes.txt")
    h.close()


@pytest.mark.parametrize(
    "rel", [".env", "web/token.json", "gateway/pairing.json", "profiles/work/.env"]
)
def test_reading_secrets_with_read_file_is_refused(tmp_path, rel):
    h = harness(tmp_path, FakeHuman(["once"]))
    home = h.settings.home.root
    seed_home(home)
    (home / rel).parent.mkdir(parents=True, exist_ok=True)
    if not (home / rel).exists():
        (home / rel).write_text(f"{SECRET_NAME}={SECRET_VALUE}\n")
    message = h.error("read_file", path=str(home / rel))
    assert "[control.secret_read]" in message and SECRET_VALUE not in message
    h.close()


def test_ordinary_reads_and_writes_are_unaffected(tmp_path):
    human = FakeHuman([])
    h = harness(tmp_path, human, config={})
    home = h.settings.home.root
    seed_home(home)
    assert h.ok("read_file", path=str(home / "config.yaml")).startswith("1: ")
    assert "likes tea" in h.ok("read_file", path=str(home / "memories" / "MEMORY.md"))
    h.ok("write_file", path="config.yaml", content="mine: true\n")  # the project's own
    h.ok("write_file", path=".env.example", content="KEY=\n")
    assert "mine: true" in h.ok("read_file", path="config.yaml")
    h.ok("write_file", path=str(home / "cache" / "scratch.txt"), content="x\n")
    assert human.prompts == []
    h.close()


def test_search_files_hides_secret_lines_and_refuses_a_secret_root(tmp_path):
    h = harness(tmp_path, None, config={})
    home = h.settings.home.root
    (home / "notes.md").write_text(f"remember {SECRET_NAME} rotation\n")
    found = h.ok("search_files", pattern=SECRET_NAME, path=str(home))
    assert "notes.md" in found and SECRET_VALUE not in found
    assert "hidden [control.secret_read]" in found  # the .env line was there and is not shown
    message = h.error("search_files", pattern=".", path=str(home / ".env"))
    assert "[control.secret_read]" in message
    names = h.ok("search_files", pattern="*.env", path=str(home), mode="files")
    assert ".env" in names  # a name is not a secret
    h.close()


# -- the terminal on the attended (approve-callback) path ---------------------------------


def test_attended_admin_command_asks_once_and_runs_when_approved(tmp_path):
    target_home = tmp_path / "other-home"
    human = FakeHuman(["deny", "always"])
    h = harness(tmp_path, human)
    command = (
        f"HERALD_HOME={target_home} {sys.executable} -m herald config set model.name other-model"
    )
    assert "denied" in h.error("terminal", command=command)
    assert human.prompts[0].choices == ("once", "deny")
    assert "control.admin" in human.prompts[0].rule
    h.ok("terminal", command=command)  # "always" from a human counts once
    assert "other-model" in (target_home / "config.yaml").read_text()
    assert len(human.prompts) == 2
    h.error("terminal", command=command.replace("other-model", "third"))  # asked again: no answer
    assert len(human.prompts) == 3
    h.close()


@pytest.mark.parametrize(
    "command",
    [
        "herald config set approvals.mode manual",
        "herald web token",
        "herald pairing approve telegram ABC",
        "cat $HERALD_HOME/.env",
        "sed -i 's/a/b/' $HERALD_HOME/config.yaml",
    ],
)
def test_attended_posture_change_is_refused_though_the_human_would_say_yes(tmp_path, command):
    human = FakeHuman(["once", "always"])
    h = harness(tmp_path, human)  # approvals.mode off, always_allow ['*']
    config = h.settings.home.root / "config.yaml"
    before = config.read_bytes()
    message = h.error("terminal", command=command)
    assert "blocked whatever the configuration" in message and "[control." in message
    assert human.prompts == [] and config.read_bytes() == before
    h.close()


def test_a_sub_agent_is_never_asked_for_an_admin_command(tmp_path):
    human = FakeHuman(["once"])
    h = harness(tmp_path, human)
    h.ctx = dataclasses.replace(h.ctx, delegated=True)
    for command in ("herald cron add x --schedule 'every 1h' --prompt hi", "herald chat -q hi"):
        message = h.error("terminal", command=command)
        assert "sub-agent may not run Herald's admin commands" in message
    assert human.prompts == []
    assert h.ok("terminal", command="echo fine").startswith("fine")  # ordinary work goes on
    h.close()
