"""`herald sessions …`, ids as people type them, and `--help` / `--profile` everywhere."""

from __future__ import annotations

import re

import pytest

from herald.config import HeraldHome
from herald.state import StateStore


@pytest.fixture
def sessions(isolated_env):
    home = HeraldHome(isolated_env).ensure()
    with StateStore(home.state_db) as store:
        chat = store.create_session(source="cli", title="planning the trip")
        review = store.create_session(source="review", parent_id=chat, title="background review")
        api = store.create_session(source="api", title="from the api")
    return {"chat": chat, "review": review, "api": api}


def test_background_reviews_are_hidden_unless_all(sessions, run_cli):
    listing = run_cli("sessions", "list")
    assert listing.returncode == 0, listing.stderr
    assert sessions["chat"] in listing.stdout and sessions["api"] in listing.stdout
    assert sessions["review"] not in listing.stdout
    assert sessions["review"] in run_cli("sessions", "list", "--all").stdout


def test_a_filter_that_matches_nothing_says_so(sessions, run_cli):
    proc = run_cli("sessions", "list", "--source", "telegram")
    assert proc.returncode == 0
    text = proc.stdout + proc.stderr
    assert "no sessions yet" not in text
    assert "telegram" in text and "3 sessions" in text


def test_show_accepts_the_hex_tail_of_an_id(sessions, run_cli):
    sid = sessions["api"]
    proc = run_cli("sessions", "show", sid.rsplit("-", 1)[1])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"session {sid}")


def test_an_ambiguous_date_prefix_names_the_sessions(sessions, run_cli):
    date = sessions["chat"][:8]  # all three were created today
    proc = run_cli("sessions", "show", date)
    assert proc.returncode == 2
    assert "ambiguous" in proc.stderr
    assert sessions["chat"] in proc.stderr and "planning the trip" in proc.stderr


@pytest.mark.parametrize(
    "command", [("chat",), ("sessions", "list"), ("config", "set"), ("gateway", "stop"), ()]
)
def test_help_never_shows_bool_placeholders(command, run_cli, isolated_env):
    proc = run_cli(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "<bool>" not in proc.stdout
    for row in proc.stdout.splitlines():  # an option that takes a value names it
        if re.search(r"│ --\w", row):
            assert not re.search(r"<(str|int|float)", row), row


def test_profile_works_after_the_subcommand(isolated_env, run_cli):
    work = HeraldHome(isolated_env / "profiles" / "work", profile="work").ensure()
    with StateStore(work.state_db) as store:
        sid = store.create_session(source="cli", title="work stuff")
    proc = run_cli("sessions", "list", "--profile", "work")
    assert proc.returncode == 0, proc.stderr
    assert sid in proc.stdout
    assert sid in run_cli("sessions", "list", "-p", "work").stdout
    assert sid in run_cli("sessions", "list", "--profile=work").stdout
    assert sid not in run_cli("sessions", "list").stdout
