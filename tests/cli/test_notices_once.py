"""Things the CLI says once, or only when they are true: the unknown-context-window
notice once per model and home (always in `herald doctor`), the `session` line only when
a session exists, and no `profiles/` folder inside a profile."""

from __future__ import annotations

import sqlite3

import yaml

from herald.state import StateStore
from herald.testing.fake_llm import Reply

NOTICE = "context window of 'fake-gpt' is unknown"


def test_the_unknown_window_notice_is_said_once_per_home_and_always_by_doctor(
    herald_home, fake_llm, run_cli
):
    fake_llm.set_handler(lambda req: Reply.text("hi"))
    said = []
    for _ in range(3):
        proc = run_cli("chat", "-q", "hello")
        assert proc.returncode == 0, proc.stderr
        said.append(NOTICE in proc.stderr)
    assert said == [True, False, False]
    for _ in range(2):
        doctor = run_cli("doctor", "--offline")
        assert NOTICE in doctor.stdout, doctor.stdout
        assert "model.context_length" in doctor.stdout


def test_a_known_window_is_not_a_notice(herald_home, fake_llm, run_cli):
    config = yaml.safe_load((herald_home / "config.yaml").read_text())
    config["model"]["context_length"] = 64_000
    (herald_home / "config.yaml").write_text(yaml.safe_dump(config))
    fake_llm.set_handler(lambda req: Reply.text("hi"))
    proc = run_cli("chat", "-q", "hello")
    assert proc.returncode == 0 and "unknown" not in proc.stderr
    assert "64,000 tokens (config)" in run_cli("doctor", "--offline").stdout


def test_a_one_shot_whose_first_store_fails_prints_no_session_line(herald_home, fake_llm, run_cli):
    # A real SQLite failure on the first write of the session (as a full disk would be).
    StateStore(herald_home / "state.db").close()
    with sqlite3.connect(herald_home / "state.db") as db:
        db.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON sessions "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    fake_llm.set_handler(lambda req: Reply.text("never stored"))
    proc = run_cli("chat", "-q", "hello")
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert not any(line.strip() == "session" or line.startswith("session ") for line in lines)
    assert "nothing was stored" in proc.stderr
    assert "disk is full" in proc.stderr or "persistence" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_profile_has_no_profiles_folder_of_its_own(herald_home, fake_llm, run_cli):
    fake_llm.set_handler(lambda req: Reply.text("hi"))
    profile = herald_home / "profiles" / "work"
    profile.mkdir(parents=True)
    # the fake model's config, so the turn is not the offline model's (4 s of the suite)
    for name in ("config.yaml", ".env"):
        (profile / name).write_text((herald_home / name).read_text())
    proc = run_cli("--profile", "work", "chat", "-q", "hello")
    assert proc.returncode == 0, proc.stderr
    assert fake_llm.model_requests(), "the turn was not the fake model's"
    assert (profile / "state.db").exists()
    assert not (profile / "profiles").exists()
