"""herald backup: consistent copies while Herald writes, verified, restored only inside
the home, and a create killed with SIGKILL leaves the home as it was."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from home_support import tree_digest

from herald.config import HeraldHome
from herald.homes import (
    BackupError,
    create_backup,
    list_backups,
    prune_backups,
    restore_backup,
    verify_backup,
)
from herald.state import StateStore


def _backup(home: HeraldHome, name: str = "b1", **kw) -> Path:
    target = home.root / "backups" / name
    create_backup(home, target, **kw)
    return target


def test_a_backup_holds_the_home_with_versions_hashes_and_counts(home: HeraldHome):
    target = _backup(home)
    manifest = json.loads((target / "manifest.json").read_text())
    paths = {f["path"] for f in manifest["files"]}
    assert {"config.yaml", "state.db", "cron/cron.db", "kanban.db", "skills/garden/SKILL.md",
            "memories/MEMORY.md"} <= paths  # fmt: skip
    assert ".env" not in paths and not (target / "files" / ".env").exists()
    assert {"path": ".env", "reason": "secrets (use --include-secrets)"} in manifest["skipped"]
    counts = manifest["counts"]
    assert (counts["sessions"], counts["messages"], counts["cron_jobs"]) == (1, 2, 1)
    assert (counts["board_tasks"], counts["skills"], counts["memory_entries"]) == (1, 1, 2)
    from herald.state.schema import LATEST_VERSION

    assert manifest["versions"]["state.db"] == LATEST_VERSION
    assert manifest["versions"]["cron/cron.db"] == 1 and manifest["versions"]["config"] == 1
    assert verify_backup(target).ok
    # the copy is one self-contained file the search index works in
    with StateStore(target / "files" / "state.db") as copy:
        assert [h.session_id for h in copy.search_messages("frost")]


def test_secrets_only_when_asked(home: HeraldHome):
    target = _backup(home, include_secrets=True)
    assert "sk-test-secret" in (target / "files" / ".env").read_text()
    assert json.loads((target / "manifest.json").read_text())["include_secrets"] is True


def test_symlinks_in_the_home_are_never_followed(home: HeraldHome, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("not Herald's")
    (home.skills_dir / "linked").symlink_to(outside)
    (home.memories_dir / "notes.md").symlink_to(outside / "private.txt")
    target = _backup(home)
    manifest = json.loads((target / "manifest.json").read_text())
    assert not any("private" in f["path"] or "linked" in f["path"] for f in manifest["files"])
    reasons = {s["path"]: s["reason"] for s in manifest["skipped"]}
    assert reasons["skills/linked"].startswith("a symlink")
    assert reasons["memories/notes.md"].startswith("a symlink")


def test_verify_finds_damage_and_strays(home: HeraldHome):
    target = _backup(home)
    (target / "files" / "skills" / "garden" / "SKILL.md").write_text("tampered")
    (target / "files" / "stray.txt").write_text("x")
    report = verify_backup(target)
    assert any("SKILL.md: contents differ" in p for p in report.problems)
    assert any("stray.txt: in the backup but not in its manifest" in p for p in report.problems)
    with pytest.raises(BackupError, match="did not verify"):
        restore_backup(target, HeraldHome(home.root.parent / "other"))


def test_restore_into_an_empty_home(home: HeraldHome, tmp_path: Path):
    target = _backup(home)
    fresh = HeraldHome(tmp_path / "fresh")
    report = restore_backup(target, fresh)
    assert report.safety_backup is None and report.restored == len(
        verify_backup(target).manifest.files
    )
    assert tree_digest(fresh.root) == {
        k: v for k, v in tree_digest(home.root).items() if k != ".env"
    }
    with StateStore(fresh.state_db) as store:
        assert store.list_sessions()[0].title == "Tomato planning"


def test_restore_over_a_home_backs_it_up_first(home: HeraldHome):
    target = _backup(home)
    before = tree_digest(home.root)
    with StateStore(home.state_db) as store:
        store.create_session(title="after the backup")
    (home.skills_dir / "late").mkdir()
    (home.skills_dir / "late" / "SKILL.md").write_text("---\nname: late\ndescription: x\n---\n")
    changed = tree_digest(home.root)
    report = restore_backup(target, home)
    assert report.safety_backup is not None and "skills/late/SKILL.md" in report.removed
    assert tree_digest(home.root) == before  # .env was not in the backup: left as it is
    again = HeraldHome(home.root / "elsewhere")
    restore_backup(report.safety_backup, again)
    assert tree_digest(again.root) == {k: v for k, v in changed.items() if k != ".env"}


def test_a_hostile_backup_cannot_write_outside_the_home(home: HeraldHome, tmp_path: Path):
    """A manifest naming ../ paths (hashes made to match) is refused before anything is
    written, and a symlink planted in the target home stops the restore."""
    target = _backup(home)
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    escape = target / "escape.txt"
    escape.write_text("pwned")
    import hashlib

    manifest["files"].append({"path": "../../escape.txt", "kind": "file", "size": 5,
                              "sha256": hashlib.sha256(b"pwned").hexdigest()})  # fmt: skip
    manifest_path.write_text(json.dumps(manifest))
    victim = HeraldHome(tmp_path / "victim" / "home")
    with pytest.raises(BackupError, match="leaves the home"):
        restore_backup(target, victim)
    assert not (tmp_path / "victim" / "escape.txt").exists()
    assert not victim.root.exists() or not any(victim.root.iterdir())

    clean = _backup(home, "b2")
    planted = HeraldHome(tmp_path / "planted")
    planted.root.mkdir()
    outside = tmp_path / "outside-skills"
    outside.mkdir()
    (planted.root / "skills").symlink_to(outside)
    with pytest.raises(BackupError, match="symlink in the home"):
        restore_backup(clean, planted)
    assert list(outside.iterdir()) == []


def test_a_backup_from_a_newer_herald_is_refused(home: HeraldHome, tmp_path: Path):
    target = _backup(home)
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["versions"]["state.db"] += 1
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(BackupError, match=r"state.db version \d+ \(this Herald knows up to"):
        restore_backup(target, HeraldHome(tmp_path / "new"))


def test_no_restore_while_a_gateway_runs_on_the_home(home: HeraldHome, tmp_path: Path):
    target = _backup(home)
    gateway = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        (home.root / "gateway").mkdir(exist_ok=True)
        (home.root / "gateway" / "gateway.pid").write_text(f"{gateway.pid}\n")
        before = tree_digest(home.root)
        with pytest.raises(BackupError, match=rf"a gateway \(pid {gateway.pid}\) is running"):
            restore_backup(target, home)
        assert tree_digest(home.root) == before
    finally:
        gateway.kill()
        gateway.wait()


def test_list_and_prune_keep_the_newest(home: HeraldHome):
    for name in ("herald-backup-20260101T000000Z", "herald-backup-20260102T000000Z",
                 "herald-backup-20260103T000000Z"):  # fmt: skip
        _backup(home, name)
    assert len(list_backups(home)) == 3
    removed = prune_backups(home, 2)
    assert [p.name for p in removed] == ["herald-backup-20260101T000000Z"]
    assert [p.name for p, _, _ in list_backups(home)] == [
        "herald-backup-20260102T000000Z", "herald-backup-20260103T000000Z"]  # fmt: skip


_WRITER = """
import sys, itertools
from herald.state import StateStore
store = StateStore(sys.argv[1])
sid = store.create_session(title="live")
print("writing", flush=True)
for i in itertools.count():
    store.append_message(sid, {"role": "user", "content": f"message {i}"})
"""


@pytest.mark.slow
def test_a_backup_while_another_process_writes_is_consistent(home: HeraldHome, herald_env):
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(home.state_db)],
                              env=herald_env, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert writer.stdout.readline().strip() == "writing"
        target = _backup(home)
        report = verify_backup(target)
        assert report.ok, report.problems
        conn = sqlite3.connect(target / "files" / "state.db")
        messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        indexed = conn.execute("SELECT COUNT(*) FROM messages_fts").fetchone()[0]
        conn.close()
        assert messages == report.manifest.counts["messages"] == indexed
        assert writer.poll() is None  # the writer never stopped for the backup
    finally:
        writer.kill()
        writer.wait()


@pytest.mark.slow
def test_kill_9_during_backup_create_leaves_the_home_as_it_was(home: HeraldHome, herald_env):
    """The create is held inside its copy of state.db (another connection holds the file
    exclusively, so the online backup waits), killed with SIGKILL there, and the home is
    byte-for-byte what it was; the next list removes the half-made backup."""
    before = tree_digest(home.root)
    holder = sqlite3.connect(home.state_db, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("SELECT COUNT(*) FROM sessions").fetchall()
    proc = subprocess.Popen(
        [sys.executable, "-m", "herald", "backup", "create"], env=herald_env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for line in proc.stderr:
            if line.startswith("copying state.db"):
                break
        staging = [p for p in (home.root / "backups").iterdir() if p.name.startswith(".herald-")]
        assert len(staging) == 1 and (staging[0] / "files" / "config.yaml").exists()
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        holder.execute("ROLLBACK")
        holder.close()
    assert tree_digest(home.root) == before
    assert list_backups(home) == []
    assert not any(p.name.startswith(".herald-") for p in (home.root / "backups").iterdir())
    with StateStore(home.state_db) as store:
        assert store.list_sessions()[0].title == "Tomato planning"


@pytest.mark.slow
def test_the_cli_refuses_restore_and_secret_copies_from_a_tool_call(home: HeraldHome, herald_env):
    target = _backup(home)
    env = {**herald_env, "HERALD_TOOL_CALL": "1"}
    for args in (["backup", "restore", str(target)], ["backup", "create", "--include-secrets"]):
        done = subprocess.run([sys.executable, "-m", "herald", *args], env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode != 0
        assert "started by an agent's tool call" in done.stderr
    from herald.safety.control_plane import classify_admin

    for args in (["backup", "restore", "x"], ["import", "hermes"],
                 ["backup", "create", "--include-secrets"]):  # fmt: skip
        assert classify_admin(args).kind == "hardline"
    assert classify_admin(["backup", "create"]).kind == "admin"
