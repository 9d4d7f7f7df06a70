"""Two hosts, one PostgreSQL board: two homes with their own dispatchers (real
processes), 20 tasks, 2 workers each. One dispatcher is killed, then one of its
workers mid-task (SIGKILL); the other host reclaims that task once its lease runs out.
Every task ends done exactly once and no task was ever held by two workers at once."""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from herald.kanban import Status
from herald.kanban.postgres_board import PostgresBoard
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge

TASKS = 20
LEASE = 3.0
TASK_RE = re.compile(r"Task (\d+):")


def _host(root: Path, name: str, fake_llm, dsn: str):
    config = merge(
        fake_model_config(fake_llm),
        {
            "kanban": {
                "backend": "postgres",
                "host_name": name,
                "max_workers": 2,
                "lease_seconds": LEASE,
                "heartbeat_seconds": 0.5,
                "poll_seconds": 0.2,
            }
        },
    )
    return make_home(root, config, {"KANBAN_DSN": dsn})


def _dispatcher(settings) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HERALD_HOME": str(settings.home.root)}
    log = open(settings.home.root / "dispatcher.log", "wb")  # noqa: SIM115
    return subprocess.Popen(
        [sys.executable, "-m", "herald", "kanban", "dispatch"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_two_hosts_share_one_board_through_crashes(pg_server, fake_llm, tmp_path):
    dsn = pg_server.new_schema_dsn()
    host_a = _host(tmp_path / "host-a", "host-a", fake_llm, dsn)
    host_b = _host(tmp_path / "host-b", "host-b", fake_llm, dsn)
    board = PostgresBoard(dsn)
    lookup = PostgresBoard(dsn)  # the model handler's own connection
    lookup_lock = threading.Lock()
    from herald.kanban import NewTask

    ids = [board.add(NewTask(f"job {i}", body=f"compute {i} squared")).id for i in range(TASKS)]
    victim: dict[str, int] = {}
    victim_chosen = threading.Event()
    completions: list[int] = []

    def model(request):
        first_user = next(m for m in request.messages if m.get("role") == "user")
        task_id = int(TASK_RE.search(str(first_user["content"])).group(1))
        if any(m.get("role") == "tool" for m in request.messages):
            return Reply.text(f"finished {task_id}")
        with lookup_lock:
            task = lookup.show(task_id)
            if not victim_chosen.is_set() and task.lease_host == "host-a":
                victim.update(task=task_id, pid=task.lease_pid)
                victim_chosen.set()
                return Reply.text("(never sent)", delay=60)  # stuck until killed
        completions.append(task_id)
        return Reply.tool_call(
            "kanban_complete", {"summary": f"{task_id} squared is {task_id**2}"}, delay=0.2
        )

    fake_llm.set_handler(model)
    dispatchers = {"a": _dispatcher(host_a), "b": _dispatcher(host_b)}
    try:
        assert victim_chosen.wait(45), "host-a never started a worker"
        dispatchers["a"].kill()  # the dispatcher of host-a dies first...
        dispatchers["a"].wait()
        os.kill(victim["pid"], signal.SIGKILL)  # ...then its worker, mid-task
        killed_at = time.time()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if all(t.status is Status.DONE for t in board.list()):
                break
            time.sleep(0.2)
    finally:
        for proc in dispatchers.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(20)
    tasks = {t.id: t for t in board.list()}
    assert sorted(tasks) == ids
    assert {t.status for t in tasks.values()} == {Status.DONE}, (
        tmp_path / "host-b" / "dispatcher.log"
    ).read_text()
    claims = board.claims()
    for task_id in ids:
        history = [c for c in claims if c.task_id == task_id]
        assert [c.outcome for c in history].count("done") == 1
        for before, after in itertools.pairwise(history):
            assert before.ended_at is not None and before.ended_at <= after.claimed_at
    assert sorted(completions) == ids  # each task's work was reported once
    stolen = [c for c in claims if c.task_id == victim["task"]]
    assert stolen[0].host == "host-a" and stolen[0].outcome == "expired"
    assert stolen[0].ended_at >= killed_at  # reclaimed only after the lease ran out
    assert stolen[-1].host == "host-b" and stolen[-1].outcome == "done"
    assert tasks[victim["task"]].attempts == 1
    board.close()
    lookup.close()
