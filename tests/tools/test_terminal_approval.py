"""The approval flow wired into the terminal tool, with a scripted human.

The flagged command is inline interpreter code that only prints 42 (or writes
a marker file inside the tmp work directory, to prove whether it ran).
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml
from test_terminal_support import (
    NEEDS_APPROVAL,
    NEEDS_APPROVAL_TRACE,
    FakeHuman,
    make_harness,
)

from herald.config import load_config
from herald.tools.terminal_approval import SessionApprovals


def _saved_always_allow(config_path: Path) -> list[str]:
    if not config_path.exists():
        return []
    data = yaml.safe_load(config_path.read_text()) or {}
    return list((data.get("approvals") or {}).get("always_allow") or [])


def test_once_runs_and_asks_again_next_time(tmp_path: Path) -> None:
    human = FakeHuman(["once", "once"])
    h = make_harness(tmp_path, approve=human)
    assert h.ok("terminal", command=NEEDS_APPROVAL).startswith("42\n[exit 0")
    assert h.ok("terminal", command=NEEDS_APPROVAL).startswith("42\n")
    assert len(human.prompts) == 2
    prompt = human.prompts[0]
    assert prompt.command == NEEDS_APPROVAL and prompt.rule == "dangerous.inline_code"
    assert prompt.choices == ("once", "session", "always", "deny")
    h.close()


def test_session_approval_is_remembered_for_the_session_only(tmp_path: Path) -> None:
    human = FakeHuman(["session"])
    h = make_harness(tmp_path, approve=human)
    h.ok("terminal", command=NEEDS_APPROVAL)
    h.ok("terminal", command=NEEDS_APPROVAL)
    assert len(human.prompts) == 1
    assert h.ctx.own(SessionApprovals).patterns
    assert _saved_always_allow(h.settings.home.config_path) == []
    h.close()
    other_session = make_harness(tmp_path, approve=FakeHuman(["deny"]))
    other_session.error("terminal", command=NEEDS_APPROVAL)
    other_session.close()


def test_always_is_saved_to_config_yaml_and_used_by_later_sessions(tmp_path: Path) -> None:
    human = FakeHuman(["always"])
    h = make_harness(tmp_path, {"model": {"name": "kept"}}, approve=human)
    h.ok("terminal", command=NEEDS_APPROVAL)
    saved = _saved_always_allow(h.settings.home.config_path)
    assert len(saved) == 1 and saved == h.ctx.config.approvals.always_allow  # type: ignore[union-attr]
    assert load_config(h.settings.home.config_path).model.name == "kept"  # rest untouched
    h.close()
    later_human = FakeHuman([])
    later = make_harness(tmp_path, approve=later_human)  # reloads config.yaml
    assert later.ok("terminal", command=NEEDS_APPROVAL).startswith("42\n")
    assert later_human.prompts == []
    later.close()


def test_a_compound_command_is_only_ever_approved_once(tmp_path: Path) -> None:
    human = FakeHuman(["always"])
    h = make_harness(tmp_path, approve=human)
    h.ok("terminal", command=f"true && {NEEDS_APPROVAL}")
    assert human.prompts[0].choices == ("once", "deny")
    assert _saved_always_allow(h.settings.home.config_path) == []
    h.close()


def test_deny_is_an_error_that_says_not_to_retry(tmp_path: Path) -> None:
    h = make_harness(tmp_path, approve=FakeHuman(["deny"]))
    err = h.error("terminal", command=NEEDS_APPROVAL_TRACE)
    assert "denied" in err and "Do not retry the same command" in err
    assert not (h.work / "ran.txt").exists()
    h.close()


def test_no_answer_is_a_denial(tmp_path: Path) -> None:
    h = make_harness(tmp_path, approve=FakeHuman([None]))
    err = h.error("terminal", command=NEEDS_APPROVAL_TRACE)
    assert "did not approve this command in time" in err
    assert not (h.work / "ran.txt").exists()
    h.close()


def test_a_human_who_never_answers_is_timed_out(tmp_path: Path) -> None:
    def slow_human(prompt: object) -> str:
        time.sleep(3)
        return "once"

    h = make_harness(tmp_path, {"approvals": {"timeout_seconds": 0.3}}, approve=slow_human)
    started = time.monotonic()
    err = h.error("terminal", command=NEEDS_APPROVAL_TRACE)
    assert time.monotonic() - started < 3
    assert "did not approve this command in time" in err
    assert not (h.work / "ran.txt").exists()
    h.close()


def test_without_a_human_the_unattended_default_applies(tmp_path: Path) -> None:
    h = make_harness(tmp_path, surface="cron")
    err = h.error("terminal", command=NEEDS_APPROVAL_TRACE)
    assert "no one can approve it here (cron)" in err
    assert not (h.work / "ran.txt").exists()
    assert h.ok("terminal", command="echo safe").startswith("safe\n")  # safe commands still run
    h.close()
    allowed = make_harness(
        tmp_path, {"approvals": {"unattended": {"cron": "allow"}}}, surface="cron"
    )
    assert allowed.ok("terminal", command=NEEDS_APPROVAL).startswith("42\n")
    allowed.close()


def test_mode_off_runs_dangerous_commands_unasked(tmp_path: Path) -> None:
    human = FakeHuman([])
    h = make_harness(tmp_path, {"approvals": {"mode": "off"}}, approve=human)
    assert h.ok("terminal", command=NEEDS_APPROVAL).startswith("42\n")
    assert human.prompts == []
    h.close()


def test_a_deny_glob_beats_always_allow_and_mode_off(tmp_path: Path) -> None:
    config = {
        "approvals": {"mode": "off", "always_allow": ["python3 -c *"], "deny": ["python3 *"]},
    }
    human = FakeHuman(["once"])
    h = make_harness(tmp_path, config, approve=human)
    err = h.error("terminal", command=NEEDS_APPROVAL_TRACE)
    assert "deny rule 'python3 *'" in err and human.prompts == []
    assert not (h.work / "ran.txt").exists()
    h.close()


def test_smart_mode_uses_the_judge_from_the_session_state(tmp_path: Path) -> None:
    judged: list[str] = []

    def approving_judge(prompt: str) -> str:
        judged.append(prompt)
        return "APPROVE\nprints a number"

    human = FakeHuman([])
    h = make_harness(tmp_path, {"approvals": {"mode": "smart"}}, approve=human)
    h.ctx.judge = approving_judge
    assert h.ok("terminal", command=NEEDS_APPROVAL).startswith("42\n")
    assert len(judged) == 1 and human.prompts == []

    h.ctx.judge = lambda prompt: "ESCALATE"
    h.ctx.approve = human = FakeHuman(["deny"])
    h.error("terminal", command=NEEDS_APPROVAL_TRACE)
    assert len(human.prompts) == 1  # an unsure judge hands over to the human
    h.close()

    unattended = make_harness(tmp_path, {"approvals": {"mode": "smart"}}, surface="api")
    asked: list[str] = []
    unattended.ctx.judge = lambda prompt: asked.append(prompt) or "APPROVE"
    err = unattended.error("terminal", command=NEEDS_APPROVAL_TRACE)
    # with nobody there the unattended allowlist decides; no judge answers for a human
    assert "is not known read-only" in err and asked == []
    assert not (unattended.work / "ran.txt").exists()
    unattended.close()
