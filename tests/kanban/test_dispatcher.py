"""The dispatcher: real worker subprocesses, the fake LLM server as their model."""

from __future__ import annotations

import logging
import sys
import threading

import pytest

from herald.kanban import NewTask, Status, open_board
from herald.kanban.dispatch import Dispatcher, gateway_dispatcher
from herald.testing.fake_llm import Reply

# A "worker" that dies at once by SIGKILL (the dispatcher appends its arguments).
SELF_KILLING = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _board(settings):
    return open_board(settings.config, settings.home, settings.secrets)


@pytest.mark.slow
def test_a_worker_that_never_reports_ends_failed_after_max_attempts(kanban_home, fake_llm):
    settings = kanban_home(kanban={"max_attempts": 3, "max_workers": 1})
    fake_llm.default_reply = Reply.text("All good, nothing to report.")
    with _board(settings) as board:
        task = board.add(NewTask("loop forever?"))
    dispatcher = Dispatcher(settings)
    try:
        for _ in range(4):  # the fourth round finds nothing to run
            dispatcher.run(threading.Event(), once=True)
    finally:
        dispatcher.close()
    with _board(settings) as board:
        failed = board.show(task.id)
        claims = board.claims(task.id)
    assert failed.status is Status.FAILED and failed.attempts == 3
    assert [c.outcome for c in claims] == ["released"] * 3
    assert failed.result.count("without completing, blocking or requesting review") == 3
    assert "No attempts left" in failed.comments[-1].body
    assert len(fake_llm.model_requests()) == 3


def test_a_worker_killed_mid_task_is_given_back_when_reaped(kanban_home):
    settings = kanban_home()
    with _board(settings) as board:
        task = board.add(NewTask("fragile"))
    dispatcher = Dispatcher(settings, command=SELF_KILLING)
    try:
        dispatcher.run(threading.Event(), once=True)
    finally:
        dispatcher.close()
    with _board(settings) as board:
        back = board.show(task.id)
    assert (back.status, back.attempts) == (Status.TODO, 1)
    assert "was killed by signal 9 without reporting" in back.comments[-1].body


def test_repeated_spawn_failures_open_the_circuit_breaker(kanban_home, caplog):
    settings = kanban_home(kanban={"max_workers": 5, "spawn_failures": 3, "breaker_seconds": 60})
    with _board(settings) as board:
        ids = [board.add(NewTask(f"task {i}")).id for i in range(4)]
    clock = Clock()
    dispatcher = Dispatcher(settings, command=["/nonexistent/herald"], clock=clock)
    try:
        with caplog.at_level(logging.ERROR, logger="herald.kanban"):
            first = dispatcher.round()
        assert first.breaker_open and first.spawned == []
        (line,) = [r.getMessage() for r in caplog.records if "circuit breaker open" in r.message]
        assert "3 worker spawns failed in a row" in line and "/nonexistent/herald" in line
        assert dispatcher.round().breaker_open  # still open: nothing is claimed
        with _board(settings) as board:
            tasks = [board.show(i) for i in ids]
        assert all(t.status is Status.TODO and t.attempts == 0 for t in tasks)
        clock.now = 61
        dispatcher.command = SELF_KILLING
        assert not dispatcher.round().breaker_open  # closed again, spawning resumes
    finally:
        dispatcher.close()


def test_tasks_for_other_profiles_run_as_that_profile(kanban_home, tmp_path):
    settings = kanban_home()
    (settings.home.profiles_dir / "coder").mkdir()
    with _board(settings) as board:
        board.add(NewTask("for coder", assignee="coder"))
        board.add(NewTask("for nobody here", assignee="ghost"))
    dispatcher = Dispatcher(settings, command=SELF_KILLING)
    try:
        report = dispatcher.round()
        assert len(report.spawned) == 1
        assert dispatcher.running[report.spawned[0]].profile == "coder"
        dispatcher.wait_for_workers(threading.Event())
    finally:
        dispatcher.close()


def test_the_gateway_runs_a_dispatcher_while_it_serves(kanban_home, fake_llm):
    settings = kanban_home(kanban={"poll_seconds": 0.2})
    fake_llm.enqueue(Reply.tool_call("kanban_complete", {"summary": "from the gateway"}))
    with _board(settings) as board:
        task = board.add(NewTask("run inside the gateway"))
        with gateway_dispatcher(settings) as dispatcher:
            assert dispatcher is not None
            assert fake_llm.wait_for_requests(2, timeout=60)
            while board.show(task.id).status is not Status.DONE:
                threading.Event().wait(0.1)
        assert board.show(task.id).result == "from the gateway"
    off = kanban_home(kanban={"in_gateway": False})
    with gateway_dispatcher(off) as dispatcher:
        assert dispatcher is None
