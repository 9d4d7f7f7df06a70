"""A worker runs one task as an unattended agent that reports with the kanban tools
(the model is the fake LLM server, scripted)."""

from __future__ import annotations

import time

import pytest

from herald.kanban import ClaimOwner, NewTask, Status, open_board
from herald.kanban.dispatch import EXIT_GAVE_BACK, EXIT_REPORTED, run_worker
from herald.state import StateStore
from herald.testing.fake_llm import Reply
from herald.toolbox import builtin_tools


def _board(settings):
    return open_board(settings.config, settings.home, settings.secrets)


def test_a_worker_completes_its_task_with_the_tools(kanban_home, fake_llm):
    settings = kanban_home()
    with _board(settings) as board:
        parent = board.add(NewTask("summarize the logs", body="the nginx ones"))
    fake_llm.enqueue(
        Reply.tool_call("kanban_comment", {"body": "reading the logs"}),
        Reply.tool_call("kanban_create", {"title": "rotate the logs", "priority": 2}),
        Reply.tool_call("kanban_complete", {"summary": "3 errors, all timeouts"}),
        Reply.text("Finished."),
    )
    outcome = run_worker(settings, parent.id, tools=builtin_tools())
    assert outcome.code == EXIT_REPORTED, outcome.message
    with _board(settings) as board:
        task = board.show(parent.id)
        assert (task.status, task.result) == (Status.DONE, "3 errors, all timeouts")
        assert any(c.body == "reading the logs" for c in task.comments)
        (child,) = task.children
        assert board.show(child).title == "rotate the logs"
        assert [c.outcome for c in board.claims(parent.id)] == ["done"]
    first = fake_llm.model_requests()[0]
    assert f"Task {parent.id}: summarize the logs" in first.last_user_text
    assert "the nginx ones" in first.last_user_text
    names = {t["function"]["name"] for t in first.tools}
    assert {"kanban_complete", "kanban_block", "terminal", "read_file"} <= names
    with StateStore(settings.home.state_db) as store:
        session = store.get_session(task.worker_session_id)
    assert session is not None and session.source == "kanban"


def test_a_worker_that_ends_without_reporting_gives_the_task_back(kanban_home, fake_llm):
    settings = kanban_home(kanban={"max_attempts": 2})
    with _board(settings) as board:
        task = board.add(NewTask("do the thing"))
    fake_llm.default_reply = Reply.text("I think it is fine now.")
    first = run_worker(settings, task.id, tools=builtin_tools())
    assert first.code == EXIT_GAVE_BACK
    assert "without completing, blocking or requesting review" in first.message
    with _board(settings) as board:
        back = board.show(task.id)
        assert (back.status, back.attempts) == (Status.TODO, 1)
        assert "I think it is fine now." in back.comments[-1].body
    second = run_worker(settings, task.id, tools=builtin_tools())
    assert second.code == EXIT_GAVE_BACK
    with _board(settings) as board:
        failed = board.show(task.id)
    assert failed.status is Status.FAILED
    assert failed.result.startswith("failed after 2 attempts: 1. the worker ended without")


def test_block_and_review_are_reports_too(kanban_home, fake_llm):
    settings = kanban_home()
    with _board(settings) as board:
        blocked = board.add(NewTask("deploy", priority=1))
        reviewed = board.add(NewTask("write the post"))
    fake_llm.enqueue(
        Reply.tool_call("kanban_block", {"reason": "needs the production password"}),
        Reply.text("Blocked."),
        Reply.tool_call("kanban_request_review", {"summary": "draft in post.md"}),
        Reply.text("Over to you."),
    )
    assert run_worker(settings, blocked.id, tools=builtin_tools()).code == EXIT_REPORTED
    assert run_worker(settings, reviewed.id, tools=builtin_tools()).code == EXIT_REPORTED
    with _board(settings) as board:
        assert board.show(blocked.id).blocked_reason == "needs the production password"
        assert board.show(reviewed.id).status is Status.REVIEW


def test_tool_errors_reach_the_model_as_clear_text(kanban_home, fake_llm):
    settings = kanban_home()
    with _board(settings) as board:
        a = board.add(NewTask("a"))
        b = board.add(NewTask("b", blocked_by=(a.id,)))
        other = board.add(NewTask("someone else's"))
        board.claim(ClaimOwner("w", "h", 1), 60, task_id=other.id)
    fake_llm.enqueue(
        Reply.tool_call("kanban_link", {"blocker_id": b.id, "blocked_id": a.id}),
        Reply.tool_call("kanban_complete", {"summary": "x", "task_id": other.id}),
        Reply.tool_call("kanban_attach", {"ref": "/etc/passwd"}),
        Reply.tool_call("kanban_complete", {"summary": "ok"}),
        Reply.text("ok"),
    )
    assert run_worker(settings, a.id, tools=builtin_tools()).code == EXIT_REPORTED
    results = [
        m["content"] for m in fake_llm.model_requests()[-1].messages if m.get("role") == "tool"
    ]
    assert "dependency cycle" in results[0]
    assert "being worked by w on h" in results[1]
    assert "outside the Herald home" in results[2]


def test_a_task_that_is_not_ready_is_not_worked(kanban_home):
    settings = kanban_home()
    with _board(settings) as board:
        a = board.add(NewTask("a"))
        b = board.add(NewTask("b", blocked_by=(a.id,)))
    outcome = run_worker(settings, b.id, tools=builtin_tools())
    assert outcome.code == 2 and f"waiting for task(s) {a.id}" in outcome.message


@pytest.mark.parametrize("backend_config", [{"backend": "postgres"}])
def test_a_missing_dsn_says_what_to_set(kanban_home, backend_config):
    settings = kanban_home(kanban=backend_config)
    outcome = run_worker(settings, 1, tools=builtin_tools())
    assert outcome.code == 2 and "KANBAN_DSN" in outcome.message


def test_the_lease_is_renewed_while_the_model_thinks(kanban_home, fake_llm):
    settings = kanban_home(kanban={"lease_seconds": 0.6, "heartbeat_seconds": 0.1})
    with _board(settings) as board:
        task = board.add(NewTask("slow"))
    reclaimed: list[list[int]] = []

    def slow_model(request):
        if any(m.get("role") == "tool" for m in request.messages):
            return Reply.text("done")
        time.sleep(1.5)  # well past the 0.6 s lease: only heartbeats keep it
        with _board(settings) as other_host:
            reclaimed.append(other_host.reclaim_expired())
        return Reply.tool_call("kanban_complete", {"summary": "slow but done"})

    fake_llm.set_handler(slow_model)
    assert run_worker(settings, task.id, tools=builtin_tools()).code == EXIT_REPORTED
    assert reclaimed == [[]]
    with _board(settings) as board:
        assert board.show(task.id).status is Status.DONE


def test_a_worker_whose_lease_is_taken_stops(kanban_home, fake_llm):
    settings = kanban_home(kanban={"lease_seconds": 5, "heartbeat_seconds": 0.1})
    with _board(settings) as board:
        task = board.add(NewTask("contested"))

    def owner_takes_over(request):
        if any(m.get("role") == "tool" for m in request.messages):
            return Reply.text("ok")
        with _board(settings) as owner:
            owner.block(task.id, "the owner stopped it", author="owner", override=True)
        time.sleep(0.5)
        return Reply.tool_call("kanban_comment", {"body": "still going"})

    fake_llm.set_handler(owner_takes_over)
    outcome = run_worker(settings, task.id, tools=builtin_tools())
    assert outcome.code == EXIT_GAVE_BACK and "no longer held" in outcome.message
    with _board(settings) as board:
        assert board.show(task.id).status is Status.BLOCKED


def test_attachments_are_home_files_or_urls(kanban_home, fake_llm):
    settings = kanban_home()
    report = settings.home.root / "kanban" / "report.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("# findings\n")
    with _board(settings) as board:
        task = board.add(NewTask("write it up"))
    fake_llm.enqueue(
        Reply.tool_call("kanban_attach", {"ref": "kanban/report.md", "note": "the write-up"}),
        Reply.tool_call("kanban_attach", {"ref": "https://example.org/run/42"}),
        Reply.tool_call("kanban_complete", {"summary": "attached"}),
        Reply.text("ok"),
    )
    assert run_worker(settings, task.id, tools=builtin_tools()).code == EXIT_REPORTED
    with _board(settings) as board:
        attached = board.show(task.id).attachments
    assert [(a.kind, a.ref) for a in attached] == [
        ("file", str(report.resolve())),
        ("url", "https://example.org/run/42"),
    ]


def test_a_bad_dsn_never_shows_its_password(tmp_path):
    from herald.kanban import KanbanError
    from herald.kanban.postgres_board import PostgresBoard

    with pytest.raises(KanbanError) as info:
        PostgresBoard("postgresql://herald:s3cretpw@127.0.0.1:1/nowhere?connect_timeout=2")
    assert "cannot connect" in str(info.value) and "s3cretpw" not in str(info.value)


def test_a_worker_stops_before_its_cost_cap_and_blocks_the_task_for_a_human(kanban_home, fake_llm):
    from herald.testing.fake_llm import FakeUsage

    dollar = FakeUsage(prompt_tokens=100, completion_tokens=1000)  # $1 at the price below
    settings = kanban_home(
        kanban={"worker_max_cost_usd": 1.5, "max_attempts": 3},
        model={"pricing": {"input_per_mtok": 0, "output_per_mtok": 1000}},
        budget={"output_estimate_tokens": 1000},  # each call is estimated at $1
    )
    with _board(settings) as board:
        task = board.add(NewTask("an expensive job"))
    fake_llm.default_reply = Reply.tool_call("kanban_comment", {"body": "working"}, usage=dollar)
    outcome = run_worker(settings, task.id, tools=builtin_tools())
    assert len(fake_llm.model_requests()) == 1  # the call that would pass $1.50 never went
    with _board(settings) as board:
        blocked = board.show(task.id)
    # Blocked, not given back: another attempt would only spend the same again.
    assert blocked.status is Status.BLOCKED, outcome.message
    assert "kanban.worker_max_cost_usd" in blocked.comments[-1].body or (
        "kanban.worker_max_cost_usd" in (blocked.result or "")
    )
    assert blocked.attempts == 0


def test_worker_max_turns_is_read_as_worker_max_iterations(kanban_home):
    settings = kanban_home(kanban={"worker_max_turns": 4})
    assert settings.config.kanban.worker_max_iterations == 4
