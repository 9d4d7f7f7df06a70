"""herald import hermes, on a home the real hermes-agent 0.19.0 wrote against the fake
model (tests/homes/fixtures/make_hermes_fixture.py), and on hostile variants of it."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from home_support import tree_digest

from herald.config import load_settings
from herald.importers.hermes import SOURCE, import_hermes, summary
from herald.state import StateStore
from herald.testing.homes import make_home

FIXTURE = Path(__file__).parent / "fixtures" / "hermes-home"


@pytest.fixture
def hermes(tmp_path: Path) -> Path:
    copy = tmp_path / "hermes"
    shutil.copytree(FIXTURE, copy, symlinks=True)
    return copy


@pytest.fixture
def settings(isolated_env: Path):
    make_home(isolated_env, {})
    return load_settings()


def _outcomes(run, area: str) -> dict[str, str]:
    return {i.name: i.outcome for i in run.items if i.area == area}


def test_a_dry_run_writes_nothing_and_says_what_would_happen(hermes: Path, settings):
    before = tree_digest(settings.home.root)
    run = import_hermes(hermes, settings, dry_run=True, secrets=False)
    assert tree_digest(settings.home.root) == before
    text = summary(run)
    assert text.startswith("Dry run: nothing was written.")
    assert "would import: garden-planner" in text
    assert "'Tomato planting' (8 messages)" in text
    assert "'Prune the roses' (blocked until you unblock it)" in text
    assert "'Order seeds' (done in hermes)" in text
    assert "would import: garden-check (paused; 0 9 * * 1;" in text
    assert (
        "skipped: skills/broken (invalid: line 1: SKILL.md must start with YAML front matter"
        in text
    )
    assert "skipped: skills/escape (a symlink, not a skill folder" in text
    assert "skipped: memories/MEMORY.md: an entry (blocked by the injection scan" in text
    assert "evil.example" not in text  # the blocked entry is named by category, never quoted
    assert "(use --secrets to copy them)" in text and "sk-fake" not in text
    assert "profile coder (a home of its own: herald -p coder import hermes --from" in text
    # the real run prints the same plan
    real = import_hermes(hermes, settings, dry_run=False, secrets=False)
    assert [(i.area, i.name, i.outcome) for i in real.items] == [
        (i.area, i.name, i.outcome) for i in run.items
    ]


def test_an_import_brings_history_memory_skills_and_paused_jobs(hermes: Path, settings):
    home = settings.home
    (home.memories_dir / "MEMORY.md").write_text("the USER plants tomatoes in mid-May,  in Lyon\n")
    import_hermes(hermes, settings, dry_run=False, secrets=False)

    with StateStore(home.state_db) as store:
        sessions = store.list_sessions(source=SOURCE)
        assert {s.title for s in sessions} == {"Tomato planting", None}
        assert all(s.meta["hermes_id"] for s in sessions)
        hits = store.search_messages("basil")
        assert hits and {h.session_id for h in hits} <= {s.id for s in sessions}
        tomato = next(s for s in sessions if s.title == "Tomato planting")
        roles = [m.role for m in store.get_messages(tomato.id)]
        assert roles[:3] == ["user", "assistant", "tool"] and roles[-1] == "assistant"

    memory = (home.memories_dir / "MEMORY.md").read_text()
    assert memory.lower().count("tomatoes in mid-may") == 1  # merged with the existing entry
    assert "evil.example" not in memory
    assert "Prefers short answers" in home.user_memory_file().read_text()

    from herald.skills.validation import validate_skill_dir

    assert (
        validate_skill_dir(home.skills_dir / "garden-planner", strict=True)[0].name
        == "garden-planner"
    )
    assert not (home.skills_dir / "broken").exists() and not (home.skills_dir / "escape").exists()

    from herald.cron import CronStore

    with CronStore.for_home(home) as cron:
        jobs = {j.name: j for j in cron.jobs()}
    assert set(jobs) == {"garden-check", "water"}
    assert not any(j.enabled for j in jobs.values())
    assert {j.created_by for j in jobs.values()} == {"unknown"}
    assert jobs["water"].schedule_text == "every 120m"
    from herald.kanban.sqlite_board import SqliteBoard

    board = SqliteBoard(home.root / "kanban.db")
    tasks = board.list()
    board.close()
    assert [(t.title, t.status.value) for t in tasks] == [("Prune the roses", "blocked")]
    assert not home.env_path.exists() or "sk-fake" not in home.env_path.read_text()
    assert "api_key" not in home.config_path.read_text()


def test_a_second_run_imports_nothing_twice(hermes: Path, settings):
    import_hermes(hermes, settings, dry_run=False, secrets=True)
    before = tree_digest(settings.home.root)
    again = import_hermes(hermes, settings, dry_run=False, secrets=True)
    assert not [i for i in again.items if i.outcome == "import"]
    assert tree_digest(settings.home.root) == before


def test_secrets_only_with_the_flag(hermes: Path, settings):
    import_hermes(hermes, settings, dry_run=False, secrets=True)
    env = settings.home.env_path.read_text()
    assert "TELEGRAM_BOT_TOKEN=123456:fake-telegram-token" in env
    assert "CUSTOM_API_KEY=sk-fake-hermes-key" in env
    assert "api_key_env: CUSTOM_API_KEY" in settings.home.config_path.read_text()


def test_lineage_is_kept(hermes: Path, settings):
    conn = sqlite3.connect(hermes / "state.db")
    first, second = [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY started_at")]
    conn.execute("UPDATE sessions SET parent_session_id = ? WHERE id = ?", (first, second))
    conn.commit()
    conn.close()
    import_hermes(hermes, settings, dry_run=False, secrets=False)
    with StateStore(settings.home.state_db) as store:
        by_hermes = {s.meta["hermes_id"]: s for s in store.list_sessions(source=SOURCE)}
    assert by_hermes[second].parent_id == by_hermes[first].id


def test_a_hostile_home_is_read_as_data(hermes: Path, settings, tmp_path: Path):
    """Links out of the home are never followed, huge files are not read, a skill whose
    name is not its folder's is refused, and approvals are never lowered."""
    secret = tmp_path / "private"
    secret.mkdir()
    (secret / "MEMORY.md").write_text("my bank PIN is 1234\n")
    shutil.rmtree(hermes / "memories")
    (hermes / "memories").symlink_to(secret)
    (hermes / "state.db").unlink()
    (hermes / "state.db").symlink_to(FIXTURE / "state.db")
    (hermes / "SOUL.md").write_text("x" * (2 << 20))
    evil = hermes / "skills" / "innocent"
    evil.mkdir()
    (evil / "SKILL.md").write_text("---\nname: ../../../etc/cron.d/x\ndescription: d\n---\nbody\n")
    linked = hermes / "skills" / "linked-file"
    linked.mkdir()
    (linked / "SKILL.md").write_text("---\nname: linked-file\ndescription: d\n---\nbody\n")
    (linked / "notes.md").symlink_to(secret / "MEMORY.md")
    config = (hermes / "config.yaml").read_text().replace("mode: manual", "mode: 'off'")
    (hermes / "config.yaml").write_text(config)

    run = import_hermes(hermes, settings, dry_run=False, secrets=False)
    text = summary(run)
    assert "memories/MEMORY.md (unreadable: memories/MEMORY.md: a symlink" in text
    assert "state.db (unreadable: state.db: a symlink" in text
    assert "SOUL.md (unreadable: SOUL.md:" in text and "over the" in text
    assert "skipped: skills/innocent (invalid:" in text
    assert "skipped: skills/linked-file (skills/linked-file/notes.md: a symlink" in text
    assert "approvals.mode: off (would lower Herald's approvals" in text
    home = settings.home
    assert "PIN" not in (home.memories_dir / "MEMORY.md").read_text()
    assert sorted(p.name for p in home.skills_dir.iterdir() if not p.name.startswith(".")) == [
        "garden-planner"
    ]
    assert "approvals" not in home.config_path.read_text()
    with StateStore(home.state_db) as store:
        assert store.list_sessions(source=SOURCE) == []


@pytest.mark.slow
def test_the_cli_prints_the_summary_and_refuses_a_tool_call(hermes: Path, settings, herald_env):
    cmd = [sys.executable, "-m", "herald", "import", "hermes", "--from", str(hermes)]
    dry = subprocess.run([*cmd, "--dry-run"], env=herald_env, capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    assert dry.returncode == 0 and "Dry run: nothing was written." in dry.stdout
    refused = subprocess.run(cmd, env={**herald_env, "HERALD_TOOL_CALL": "1"},
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert refused.returncode != 0 and "started by an agent's tool call" in refused.stderr
    missing = subprocess.run([*cmd[:-1], str(hermes / "nope")], env=herald_env,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert missing.returncode != 0 and "pass the hermes home with --from" in missing.stderr
