"""`herald cron …` as a user runs it: real subprocesses on a temp home, fake model server."""

from __future__ import annotations

import json

import pytest
from cron_support import utc

from herald.cron.jobs import JobSpec, add_job
from herald.cron.scheduler import Scheduler, jitter_for
from herald.cron.store import CronStore
from herald.testing.fake_llm import Reply
from herald.toolbox import builtin_tools


@pytest.mark.slow
def test_a_job_from_add_to_remove(cron_settings, fake_llm, herald) -> None:
    cron_settings()
    fake_llm.default_reply = Reply.text("the build is green")
    added = herald("cron", "add", "build", "--schedule", "every 2h", "--prompt", "check the build",
                   "--at", "2026-12-01T08:00:00Z")  # fmt: skip
    assert "next run 2026-12-01T10:00" in added.stdout
    assert "no scheduler is running" in added.stderr and "herald cron daemon" in added.stderr
    refused = herald("cron", "add", "x", "--schedule", "every fortnight", "--prompt", "p",
                     check=False)  # fmt: skip
    assert refused.returncode == 2 and "every 2h" in refused.stderr  # shows a valid example
    herald("cron", "edit", "build", "--prompt", "check the build and the docs")
    herald("cron", "pause", "build")
    assert "skipped" in herald("cron", "tick", "--at", "2026-12-01T10:00:10Z").stdout
    herald("cron", "resume", "build")
    manual = herald("cron", "run", "build")
    assert "ok" in manual.stdout and "[manual]" in manual.stdout
    assert "the build is green" in manual.stdout
    listed = json.loads(herald("cron", "list", "--json").stdout)
    assert listed["scheduler"]["running"] is False
    (job,) = listed["jobs"]
    assert job["prompt"] == "check the build and the docs" and job["enabled"] is True
    assert job["last_run"]["kind"] == "manual"
    herald("cron", "remove", "build")
    runs = json.loads(herald("cron", "runs", "build", "--json").stdout)
    assert [(r["kind"], r["status"], r["reason"]) for r in runs] == [
        ("scheduled", "skipped", "paused"),
        ("manual", "ok", "text_response"),
    ]
    assert "check the build and the docs" in fake_llm.model_requests()[-1].last_user_text
    gone = herald("cron", "show", "build", check=False)
    assert gone.returncode != 0 and "no job named 'build'" in gone.stderr


def test_jitter_delays_each_occurrence_by_a_stable_offset(cron_settings) -> None:
    settings = cron_settings()
    with CronStore.for_home(settings.home) as store:
        job = add_job(settings, store, "j", JobSpec(schedule="@hourly", prompt="x",
                      jitter_seconds=600), now=utc(2026, 12, 1, 9, 30))  # fmt: skip
        occurrence = utc(2026, 12, 1, 10).timestamp()
        offset = jitter_for(job, occurrence)
        assert 0 <= offset < 600 and offset == jitter_for(job, occurrence)
        assert jitter_for(job, occurrence + 3600) != offset  # each occurrence its own offset
        scheduler = Scheduler(settings, store, tools=builtin_tools())
        early = utc(2026, 12, 1, 10).timestamp() + offset - 1
        from datetime import UTC, datetime

        assert scheduler.tick(datetime.fromtimestamp(early, UTC)).records == []
        (record,) = scheduler.tick(datetime.fromtimestamp(early + 2, UTC)).records
        assert record.scheduled_for == occurrence and record.status == "ok"
