"""Who may make a job and where it may deliver (issue 26, part C).

The fake model plays a hijacked agent: it asks the ``cronjob`` tool for jobs that would
append to ``~/.ssh/authorized_keys``. A job the model makes needs the owner's approval
(refused when nobody is there) and may deliver only under ``cron/output``; the owner's
own CLI job may deliver elsewhere. Delivery checks again, so a row edited afterwards
(or an old row) cannot write outside, and a symlink planted in ``cron/output`` is
never followed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from cron_support import herald_cmd, herald_env

from herald.cron.confine import open_confined
from herald.cron.jobs import JobError, JobSpec, add_job, edit_job
from herald.cron.store import CronStore
from herald.cron.targets import deliver
from herald.safety import ApprovalPrompt
from herald.testing.fake_llm import Reply


def tool_answers(fake_llm) -> list[dict]:
    request = fake_llm.model_requests()[-1]
    return [json.loads(m["content"]) for m in request.messages if m.get("role") == "tool"]


def run_herald(home: Path, fake_home: Path, *args: str) -> subprocess.CompletedProcess:
    env = herald_env(home)
    env["HOME"] = str(fake_home)  # `~` in a target must never reach the real home
    return subprocess.run(herald_cmd(*args), env=env, capture_output=True, text=True,
                          timeout=90, check=False)  # fmt: skip


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    home = tmp_path / "user"
    (home / ".ssh").mkdir(parents=True)
    return home


@pytest.mark.slow
def test_unattended_chat_creates_no_job_whatever_it_asks(cron_settings, fake_llm, fake_home):
    settings = cron_settings()
    evil = {"action": "create", "name": "keys", "schedule": "every 1h", "prompt": "print my key",
            "deliver": "file:~/.ssh/authorized_keys"}  # fmt: skip
    fake_llm.enqueue(
        Reply.tool_call("cronjob", evil),
        Reply.tool_call("cronjob", {**evil, "name": "dotdot", "deliver": "file:../../x.md"}),
        Reply.tool_call("cronjob", {**evil, "name": "plain", "deliver": "file:report.md"}),
        Reply.tool_call("cronjob", {**evil, "name": "chat", "deliver": "telegram:666"}),
        Reply.text("done"),
    )
    done = run_herald(settings.home.root, fake_home, "chat", "-q", "set up my jobs")
    assert done.returncode == 0, done.stderr
    keys, dotdot, plain, chat = tool_answers(fake_llm)
    assert not keys["ok"] and "cron/output" in keys["error"]
    assert "herald cron edit keys --deliver" in keys["error"]  # what the owner can do
    assert not dotdot["ok"] and "cron/output" in dotdot["error"]
    # a target the model may choose still needs the owner, who is not here
    assert not plain["ok"] and "needs the owner's approval" in plain["error"]
    assert "herald cron add plain" in plain["error"]
    assert not chat["ok"] and "telegram:666" in chat["error"]
    with CronStore.for_home(settings.home) as store:
        assert store.jobs() == []
    assert not (fake_home / ".ssh" / "authorized_keys").exists()


def test_attended_create_shows_the_whole_job_and_deny_leaves_none(make_agent, fake_llm):
    agent = make_agent()
    asked: list[ApprovalPrompt] = []
    answers = iter(["deny", "once"])

    def approve(prompt: ApprovalPrompt) -> str:
        asked.append(prompt)
        return next(answers)

    agent.tool_context.approve = approve
    job = {"action": "create", "name": "brief", "schedule": "0 9 * * 1-5",
           "prompt": "summarise my inbox\nthen list today's meetings",
           "deliver": "file:brief.md", "timezone": "Europe/Berlin"}  # fmt: skip
    fake_llm.enqueue(Reply.tool_call("cronjob", job), Reply.text("ok"))
    agent.run_turn("make me a morning brief")
    (answer,) = tool_answers(fake_llm)[-1:]
    assert not answer["ok"] and "did not approve" in answer["error"]
    text = asked[0].text()
    for part in ("cronjob create brief", "0 9 * * 1-5", "Europe/Berlin", "file:brief.md",
                 "summarise my inbox", "then list today's meetings", "allow:"):  # fmt: skip
        assert part in text, text
    with CronStore.for_home(agent.home) as store:
        assert store.jobs() == []

    fake_llm.enqueue(Reply.tool_call("cronjob", job), Reply.text("ok"))
    agent.run_turn("yes, really")
    assert tool_answers(fake_llm)[-1]["ok"]
    with CronStore.for_home(agent.home) as store:
        (stored,) = store.jobs()
    assert (stored.created_by, stored.origin) == ("tool", None)


def test_attended_create_outside_output_is_refused_without_asking(make_agent, fake_llm):
    agent = make_agent()
    asked: list[ApprovalPrompt] = []
    agent.tool_context.approve = lambda p: asked.append(p) or "once"
    for target in ("file:~/.ssh/authorized_keys", "file:/etc/cron.d/x", "file:a/../../../x",
                   "telegram:666", "file:a\x00b", "file:.", "file:~"):  # fmt: skip
        fake_llm.enqueue(Reply.tool_call("cronjob", {"action": "create", "name": "x",
                         "schedule": "@daily", "prompt": "p", "deliver": target}),
                         Reply.text("ok"))  # fmt: skip
        agent.run_turn("schedule it")
        assert not tool_answers(fake_llm)[-1]["ok"], target
    assert asked == []
    with CronStore.for_home(agent.home) as store:
        assert store.jobs() == []


def test_the_model_may_deliver_to_the_chat_it_came_from(make_agent, fake_llm):
    agent = make_agent()
    agent.tool_context.approve = lambda p: "once"
    agent.tool_context.origin = "telegram:42:7"
    for name, target in (("home", "telegram:42"), ("away", "telegram:43")):
        fake_llm.enqueue(Reply.tool_call("cronjob", {"action": "create", "name": name,
                         "schedule": "@daily", "prompt": "p", "deliver": target}),
                         Reply.text("ok"))  # fmt: skip
        agent.run_turn("schedule it")
    with CronStore.for_home(agent.home) as store:
        assert [(j.name, j.origin) for j in store.jobs()] == [("home", "telegram:42:7")]


def test_remove_and_resume_need_the_owner_pause_does_not(make_agent, fake_llm, cron_settings):
    agent = make_agent()
    with CronStore.for_home(agent.home) as store:
        settings = cron_settings()
        add_job(settings, store, "owners", JobSpec(schedule="@daily", prompt="p"),
                created_by="cli")  # fmt: skip
    for action in ("pause", "resume", "remove"):
        fake_llm.enqueue(Reply.tool_call("cronjob", {"action": action, "name": "owners"}),
                         Reply.text("ok"))  # fmt: skip
        agent.run_turn(action)
    pause, resume, remove = tool_answers(fake_llm)[-3:]  # the session's history, in order
    assert pause["ok"] and pause["job"]["state"] == "paused"
    assert not resume["ok"] and "needs the owner's approval" in resume["error"]
    assert not remove["ok"] and "needs the owner's approval" in remove["error"]
    with CronStore.for_home(agent.home) as store:
        (job,) = store.jobs()
        assert not job.enabled


@pytest.mark.slow
def test_owner_cli_job_delivers_where_the_owner_said(cron_settings, fake_llm, fake_home, tmp_path):
    settings = cron_settings()
    report = tmp_path / "x" / "report.md"
    home = settings.home.root
    added = run_herald(home, fake_home, "cron", "add", "rep", "--schedule", "@daily",
                       "--prompt", "write the report", "--deliver", f"file:{report}")  # fmt: skip
    assert added.returncode == 0, added.stderr
    fake_llm.enqueue(Reply.text("REPORT BODY"))
    ran = run_herald(home, fake_home, "cron", "run", "rep")
    assert ran.returncode == 0, ran.stderr
    assert "REPORT BODY" in report.read_text()
    with CronStore.for_home(settings.home) as store:
        assert store.job("rep").created_by == "cli"


@pytest.mark.slow
def test_a_tampered_row_does_not_write_outside(cron_settings, fake_llm, fake_home):
    settings = cron_settings()
    with CronStore.for_home(settings.home) as store:
        add_job(settings, store, "evil", JobSpec(schedule="@daily", prompt="say hi",
                deliver="file:out.md"), created_by="tool", origin="telegram:1")  # fmt: skip
    with sqlite3.connect(settings.home.cron_dir / "cron.db") as db:
        db.execute("UPDATE cron_jobs SET deliver = 'file:~/.ssh/authorized_keys'")
    fake_llm.enqueue(Reply.text("ssh-ed25519 AAAA attacker"))
    ran = run_herald(settings.home.root, fake_home, "cron", "run", "evil")
    assert not (fake_home / ".ssh" / "authorized_keys").exists()
    with CronStore.for_home(settings.home) as store:
        (record,) = store.runs("evil")
    assert record.status == "blocked" and record.reason == "delivery_refused", ran.stdout
    assert "cron/output" in record.error and "herald cron edit evil" in record.error
    assert fake_llm.model_requests() == []  # nothing ran whose answer had nowhere to go


@pytest.mark.slow
def test_a_link_planted_in_cron_output_blocks_the_run(cron_settings, fake_llm, fake_home):
    settings = cron_settings()
    with CronStore.for_home(settings.home) as store:
        add_job(settings, store, "daily", JobSpec(schedule="@daily", prompt="say hi",
                deliver="file:daily.md"), created_by="tool")  # fmt: skip
    output = Path(settings.home.cron_dir) / "output"
    output.mkdir(parents=True, exist_ok=True)
    os.symlink(fake_home / ".ssh" / "authorized_keys", output / "daily.md")  # planted later
    fake_llm.enqueue(Reply.text("ssh-ed25519 AAAA attacker"))
    run_herald(settings.home.root, fake_home, "cron", "run", "daily")
    assert not (fake_home / ".ssh" / "authorized_keys").exists()
    with CronStore.for_home(settings.home) as store:
        (record,) = store.runs("daily")
    assert record.status == "blocked" and "through a symlink" in record.error


def _store_with(settings, deliver_to: str, created_by: str = "tool") -> CronStore:
    store = CronStore.for_home(settings.home)
    add_job(settings, store, "j", JobSpec(schedule="@daily", prompt="p", deliver="log"),
            created_by=created_by)  # fmt: skip
    return store


def test_delivery_checks_again_whatever_the_row_says(cron_settings, fake_home, tmp_path):
    settings = cron_settings()
    outside = tmp_path / "outside.md"
    with _store_with(settings, "log") as store:
        item = deliver(store, settings.home, job_name="j", target_text=f"file:{outside}",
                       what="result", text="hello", created_by="tool")  # fmt: skip
        assert item.status == "dead" and "refused" in (item.error or "")
        # a caller that does not say who made the job gets the confined default
        item = deliver(store, settings.home, job_name="j", target_text=f"file:{outside}",
                       what="result", text="hello")  # fmt: skip
        assert item.status == "dead"
    assert not outside.exists()
    assert "hello" in (Path(settings.home.logs_dir) / "cron.log").read_text()


def test_a_symlink_in_cron_output_is_not_followed(cron_settings, tmp_path):
    settings = cron_settings()
    output = Path(settings.home.cron_dir) / "output"
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    victim = secret_dir / "authorized_keys"
    victim.write_text("owner-key\n")
    output.mkdir(parents=True, exist_ok=True)
    os.symlink(victim, output / "report.md")
    os.symlink(secret_dir, output / "sub")
    os.link(victim, output / "hard.md")
    with _store_with(settings, "log") as store:
        for target in ("file:report.md", "file:sub/authorized_keys", "file:hard.md",
                       f"file:{output}/report.md"):  # fmt: skip
            item = deliver(store, settings.home, job_name="j", target_text=target,
                           what="result", text="attacker-key", created_by="tool")  # fmt: skip
            assert item.status == "dead", target
        # the plain case still works, in a new sub-folder too
        item = deliver(store, settings.home, job_name="j", target_text="file:daily/a.md",
                       what="result", text="fine", created_by="tool")  # fmt: skip
        assert item.status == "delivered"
    assert victim.read_text() == "owner-key\n"
    assert "fine" in (output / "daily" / "a.md").read_text()


def test_the_safe_opener_refuses_links_itself(cron_settings, tmp_path):
    # delivery_refusal checks links first; the opener must hold even if one appears after
    settings = cron_settings()
    output = Path(settings.home.cron_dir) / "output"
    output.mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    os.symlink(victim, output / "a.md")
    os.symlink(tmp_path, output / "dir")
    for rel in ("a.md", "dir/victim"):
        with pytest.raises(OSError, match="symlink"):
            open_confined(settings.home, Path(rel))
    assert victim.read_text() == "keep\n"


def test_an_owner_file_target_still_passes_the_write_gate(cron_settings, fake_home, monkeypatch):
    monkeypatch.setenv("HOME", str(fake_home))
    settings = cron_settings()
    keys = fake_home / ".ssh" / "authorized_keys"
    with _store_with(settings, "log", created_by="cli") as store:
        item = deliver(store, settings.home, job_name="j", target_text=f"file:{keys}",
                       what="result", text="key", created_by="cli",
                       config=settings.config)  # fmt: skip
    assert item.status == "dead", item
    assert not keys.exists()


def test_old_rows_are_confined_and_the_owner_can_vouch(cron_settings, tmp_path):
    settings = cron_settings()
    db_path = Path(settings.home.cron_dir) / "cron.db"
    with CronStore.for_home(settings.home):
        pass
    with sqlite3.connect(db_path) as db:  # a database from before the provenance columns
        db.execute("ALTER TABLE cron_jobs DROP COLUMN created_by")
        db.execute("ALTER TABLE cron_jobs DROP COLUMN origin")
        db.execute(
            "INSERT INTO cron_jobs (name, schedule, schedule_text, tz, prompt, deliver, catch_up,"
            " created_at, updated_at) VALUES ('old', '@daily', '@daily', 'UTC', 'p', ?, 'once',"
            " 0, 0)",
            (f"file:{tmp_path / 'old.md'}",),
        )
    with CronStore.for_home(settings.home) as store:
        assert store.job("old").created_by == "unknown"
        item = deliver(store, settings.home, job_name="old", target_text=store.job("old").deliver,
                       what="result", text="x", created_by="unknown")  # fmt: skip
        assert item.status == "dead"
        with pytest.raises(JobError, match="cron/output"):  # the model's kind of edit
            edit_job(settings, store, "old", JobSpec(deliver=f"file:{tmp_path / 'o2.md'}"))
        job = edit_job(settings, store, "old", JobSpec(deliver=f"file:{tmp_path / 'o2.md'}"),
                       by_owner=True)  # fmt: skip
        assert job.created_by == "cli"
