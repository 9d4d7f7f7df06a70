"""Upgrades never break a home: every fixture home (one per state schema version, made
by the Herald of that time: tests/homes/fixtures/make_state_fixtures.py) migrates to
whatever the newest version in the migration list is, and then works; an older Herald
refuses a newer home; a failed or killed migration leaves the home as it was."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from home_support import tree_digest

from herald.state import StateError, StateStore
from herald.state.schema import MIGRATIONS, Migration
from herald.testing.fake_llm.script import Reply

FIXTURES = sorted(
    (Path(__file__).parent / "fixtures").glob("state-v*"),
    key=lambda p: int(p.name.removeprefix("state-v")),
)


def _latest() -> int:
    return MIGRATIONS[-1].version  # whatever the list says today, not a number in this file


def _version(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    finally:
        conn.close()


def _install(fixture: Path, root: Path, fake_llm=None) -> dict:
    shutil.copytree(fixture, root)
    if fake_llm is not None:
        config = yaml.safe_load((root / "config.yaml").read_text())
        config["model"]["base_url"] = fake_llm.openai_base_url
        (root / "config.yaml").write_text(yaml.safe_dump(config))
    return json.loads((root / "FIXTURE.json").read_text())


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "herald", *args], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def test_there_is_a_fixture_for_every_shipped_version_up_to_the_first_with_identities():
    versions = [int(p.name.removeprefix("state-v")) for p in FIXTURES]
    assert versions == list(range(versions[0], versions[-1] + 1)) and versions[0] == 3
    for fixture in FIXTURES:
        made = json.loads((fixture / "FIXTURE.json").read_text())
        assert _version(fixture / "state.db") == made["state_schema_version"]


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_an_old_home_migrates_forward_and_works(fixture: Path, isolated_env: Path, fake_llm,
                                                herald_env):  # fmt: skip
    made = _install(fixture, isolated_env, fake_llm)
    before = made["state_schema_version"]
    fake_llm.enqueue(Reply.text("Peppers like it warm: late May."))
    turn = _cli(herald_env, "chat", "-q", "and peppers?")
    assert turn.returncode == 0, turn.stderr
    assert "Peppers like it warm" in turn.stdout

    assert _version(isolated_env / "state.db") == _latest()
    copies = sorted((isolated_env / "backups").glob("pre-*/state.db"))
    if before < _latest():
        assert len(copies) == 1 and _version(copies[0]) == before
        assert "from schema version" in (copies[0].parent / "MIGRATION.txt").read_text()
    else:
        assert copies == []
    with StateStore(isolated_env / "state.db") as store:
        hits = store.search_messages("tomatoes")
        assert hits, "the old session is not searchable after the upgrade"
        titles = {s.title for s in store.list_sessions()}
        assert "When should I plant tomatoes in Lyon?" in titles
        assert any(h.session_id for h in store.search_messages("peppers"))

    if any("cron job" in line for line in made["made"]):
        listed = _cli(herald_env, "cron", "list")
        assert listed.returncode == 0 and "garden-check" in listed.stdout, listed.stderr
    if any("board task" in line for line in made["made"]):
        listed = _cli(herald_env, "kanban", "list")
        assert listed.returncode == 0 and "prune the roses" in listed.stdout, listed.stderr
    doctor = _cli(herald_env, "doctor", "--offline")
    assert "✗ format" not in doctor.stdout and "! format state.db" not in doctor.stdout


# What each shipped step does, frozen: a home migrated by a step's first form would miss
# whatever an edit adds (step 6 was once edited so; see herald.state.schema.REPAIRS).
# Append a new Migration instead, and add its digest here once it has shipped.
SHIPPED = {1: "675588cad790ffb2", 2: "dcb9feda29f46267", 3: "1cd0e8e2e5dd885f",
           4: "ee83794de1b77adb", 5: "1251088f355521a9", 6: "b818c29520e500db",
           7: "9c65fdb8c1625d48", 8: "d28d95dbf7ab6971"}  # fmt: skip


def test_shipped_migrations_are_never_edited():
    import hashlib

    for step in MIGRATIONS:
        if step.version in SHIPPED:
            digest = hashlib.sha256("\x00".join(step.statements).encode()).hexdigest()[:16]
            assert digest == SHIPPED[step.version], f"migration {step.version} was edited"
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_an_older_herald_refuses_a_newer_home(isolated_env: Path, herald_env):
    from herald.cron import CronStore, CronStoreError
    from herald.kanban.model import KanbanError
    from herald.kanban.sqlite_board import SqliteBoard

    _install(FIXTURES[-1], isolated_env)
    StateStore(isolated_env / "state.db").close()
    CronStore(isolated_env / "cron" / "cron.db").close()
    SqliteBoard(isolated_env / "kanban.db").close()
    for db in ("state.db", "cron/cron.db", "kanban.db"):
        conn = sqlite3.connect(isolated_env / db)
        if db == "state.db":
            conn.execute(
                "INSERT INTO schema_version VALUES (?, 'from the future', 0)", (_latest() + 1,)
            )
        else:
            conn.execute("PRAGMA user_version = 99")
        conn.commit()
        conn.close()
    before = tree_digest(isolated_env)
    with pytest.raises(StateError, match="written by a newer Herald"):
        StateStore(isolated_env / "state.db")
    with pytest.raises(CronStoreError, match="written by a newer Herald"):
        CronStore(isolated_env / "cron" / "cron.db")
    with pytest.raises(KanbanError, match="written by a newer Herald"):
        SqliteBoard(isolated_env / "kanban.db")
    config = isolated_env / "config.yaml"
    config.write_text(config.read_text() + "config_version: 2\n")
    chat = _cli(herald_env, "chat", "-q", "hello")
    assert chat.returncode != 0
    assert "config_version" in chat.stderr and "newer Herald" in chat.stderr
    doctor = _cli(herald_env, "doctor", "--offline")
    assert "✗ format state.db" in doctor.stdout and "✗ format cron/cron.db" in doctor.stdout
    # the databases and the files are untouched (the owner's USER.md moving into
    # memories/users/owner/ is the home layout's own, older, adoption step)
    kept = {k: v for k, v in before.items() if k != "config.yaml" and "USER.md" not in k}
    assert {k: v for k, v in tree_digest(isolated_env).items() if k in kept} == kept


def test_a_failing_migration_leaves_the_file_as_it_was(isolated_env: Path, monkeypatch):
    import herald.state.schema as schema

    _install(FIXTURES[0], isolated_env)
    before = tree_digest(isolated_env)
    broken = Migration(_latest() + 1, "a step that fails", ("ALTER TABLE no_such_table ADD x",))
    monkeypatch.setattr(schema, "MIGRATIONS", (*MIGRATIONS, broken))
    monkeypatch.setattr(schema, "LATEST_VERSION", broken.version)
    with pytest.raises(StateError) as caught:
        StateStore(isolated_env / "state.db")
    message = str(caught.value)
    assert f"failed at step {broken.version} (a step that fails)" in message
    assert "rolled back: it is as it was (schema version 3)" in message
    assert "a copy from before is at" in message
    assert tree_digest(isolated_env) == before
    monkeypatch.undo()
    with StateStore(isolated_env / "state.db") as store:  # the real list still works
        assert store.schema_version == _latest()


_PAUSED_MIGRATION = """
import sys, time
from pathlib import Path
import herald.state.schema as schema
import herald.state.store as store_module

marker = Path(sys.argv[2])
real_open = store_module.open_connection

def pause():
    marker.write_text("inside the migration")
    time.sleep(3600)
    return 0

def open_with_pause(path, **kw):
    conn = real_open(path, **kw)
    conn.create_function("pause_here", 0, pause)
    return conn

store_module.open_connection = open_with_pause
last = schema.MIGRATIONS[-1].version
schema.MIGRATIONS = (*schema.MIGRATIONS,
                     schema.Migration(last + 1, "pause", ("SELECT pause_here()",)))
schema.LATEST_VERSION = last + 1
store_module.StateStore(Path(sys.argv[1]))
"""


@pytest.mark.slow
def test_kill_9_during_a_migration_leaves_the_home_as_it_was(isolated_env: Path, herald_env,
                                                             tmp_path: Path):  # fmt: skip
    """Every real step has run inside the migration's transaction when the process is
    killed; the file still reads as the old version and then migrates normally."""
    _install(FIXTURES[0], isolated_env)
    before = tree_digest(isolated_env)
    marker = tmp_path / "paused"
    proc = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_MIGRATION, str(isolated_env / "state.db"), str(marker)],
        env=herald_env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        while not marker.exists():
            try:
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            pytest.fail(f"the migration ended before its pause: {proc.stderr.read()}")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    assert tree_digest(isolated_env) == before
    assert _version(isolated_env / "state.db") == 3
    assert len(list((isolated_env / "backups").glob("pre-*/state.db"))) == 1
    with StateStore(isolated_env / "state.db") as store:
        assert store.schema_version == _latest()
        assert store.search_messages("tomatoes")
