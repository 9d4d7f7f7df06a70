"""Only the owner approves, rejects and unblocks; a worker moves only the task it holds
(issue 26, part C). The fake model plays a worker that tries to approve review tasks and
unblock the owner's blocked ones; the same rules hold on SQLite and PostgreSQL, in the
board and in the tools, and the owner's CLI still does it all."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from herald.kanban import (
    ClaimOwner,
    InvalidTransition,
    NewTask,
    OwnerOnly,
    Status,
    is_owner,
    open_board,
)
from herald.kanban.dispatch import EXIT_REPORTED, run_worker
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge
from herald.toolbox import builtin_tools

W = ClaimOwner("worker-w", "host-1", 11)


def _waiting(board):
    """A task in review and one blocked for the owner, each left by a worker."""
    review = board.add(NewTask("write the post"))
    lease = board.claim(W, 60, task_id=review.id)
    board.request_review(review.id, "draft in post.md", lease=lease, author="worker@11")
    blocked = board.add(NewTask("deploy"))
    lease = board.claim(W, 60, task_id=blocked.id)
    board.block(blocked.id, "needs the production password", lease=lease, author="worker@11")
    return review, blocked


def test_who_counts_as_the_owner():
    assert is_owner("owner") and is_owner("owner (web)")
    for author in ("agent:s1", "agent", "worker@11", "owner2", "ownerx (web)", "", "Owner"):
        assert not is_owner(author), author


def test_the_board_refuses_non_owners_the_owners_moves(board):
    review, blocked = _waiting(board)
    todo = board.add(NewTask("idle"))
    for author in ("agent:s1", "worker@11"):
        with pytest.raises(OwnerOnly, match=f"herald kanban approve {review.id}"):
            board.approve(review.id, author=author)
        with pytest.raises(OwnerOnly, match="only the owner approves or rejects"):
            board.reject(review.id, "do it again", author=author)
        with pytest.raises(OwnerOnly, match=f"herald kanban approve {review.id}"):
            board.complete(review.id, "approved by me", author=author)
        with pytest.raises(OwnerOnly, match=f"herald kanban unblock {blocked.id}"):
            board.unblock(blocked.id, author=author)
        with pytest.raises(OwnerOnly, match="blocked waiting for the owner"):
            board.complete(blocked.id, "done anyway", author=author)
        with pytest.raises(OwnerOnly, match="only the worker holding its lease"):
            board.complete(todo.id, "nothing to see", author=author)
        with pytest.raises(OwnerOnly):
            board.request_review(todo.id, "looks done", author=author)
    held = board.add(NewTask("held"))
    board.claim(W, 60, task_id=held.id)
    with pytest.raises(InvalidTransition, match="being worked by"):  # override is the owner's
        board.complete(held.id, "mine now", author="agent:s1", override=True)
    assert board.show(review.id).status is Status.REVIEW
    assert board.show(blocked.id).status is Status.BLOCKED
    assert board.show(todo.id).status is Status.TODO
    assert board.approve(review.id, author="owner (web)").status is Status.DONE
    assert board.unblock(blocked.id, author="owner", note="set").status is Status.TODO
    assert (
        board.complete(held.id, "taken over", author="owner", override=True).status is Status.DONE
    )


def _herald(*args: str, code: int = 0) -> str:
    proc = subprocess.run([sys.executable, "-m", "herald", "kanban", *args], env=dict(os.environ),
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == code, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_worker_cannot_approve_or_unblock_and_the_owner_can(
    tmp_path, fake_llm, backend, request, monkeypatch
):
    section, env = {"backend": backend}, {}
    if backend == "postgres":  # the DSN is a secret: in the home's .env, as a user keeps it
        env["KANBAN_DSN"] = request.getfixturevalue("pg_server").new_schema_dsn()
        section["dsn"] = "${KANBAN_DSN}"
    settings = make_home(tmp_path / "home", merge(fake_model_config(fake_llm), {"kanban": section}),
                         env)  # fmt: skip
    monkeypatch.setenv("HERALD_HOME", str(settings.home.root))  # for the owner's CLI
    with open_board(settings.config, settings.home, settings.secrets) as board:
        review, blocked = _waiting(board)
        mine = board.add(NewTask("my own work"))
    fake_llm.enqueue(
        Reply.tool_call("kanban_complete", {"summary": "LGTM", "task_id": review.id}),
        Reply.tool_call("kanban_unblock", {"task_id": blocked.id, "note": "I set it"}),
        Reply.tool_call("kanban_request_review", {"summary": "done, please check"}),
        Reply.tool_call("kanban_complete", {"summary": "approving myself", "task_id": mine.id}),
        Reply.text("Over to you."),
    )
    assert run_worker(settings, mine.id, tools=builtin_tools()).code == EXIT_REPORTED
    results = [
        m["content"] for m in fake_llm.model_requests()[-1].messages if m.get("role") == "tool"
    ]
    assert "only the owner approves or rejects" in results[0]
    assert f"herald kanban approve {review.id}" in results[0]
    assert "blocked waiting for the owner" in results[1]
    assert f"herald kanban unblock {blocked.id}" in results[1]
    assert json.loads(results[2])["status"] == "review"
    assert f"herald kanban approve {mine.id}" in results[3]  # its own review, too
    with open_board(settings.config, settings.home, settings.secrets) as board:
        assert board.show(review.id).status is Status.REVIEW
        assert board.show(blocked.id).status is Status.BLOCKED
        assert board.show(mine.id).status is Status.REVIEW
    # the owner, at the terminal, on the same board
    _herald("approve", str(review.id))
    _herald("approve", str(mine.id), "--note", "good")
    _herald("unblock", str(blocked.id))
    with open_board(settings.config, settings.home, settings.secrets) as board:
        assert board.show(review.id).status is Status.DONE
        assert board.show(mine.id).status is Status.DONE
        assert board.show(blocked.id).status is Status.TODO
