"""The contract every board backend keeps; each test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from herald.kanban import (
    ClaimOwner,
    CycleError,
    InvalidTransition,
    KanbanError,
    LeaseLost,
    NewTask,
    Status,
    TaskNotFound,
)

A = ClaimOwner("worker-a", "host-a", 1111)
B = ClaimOwner("worker-b", "host-b", 2222)


def test_tasks_are_stored_and_listed_by_priority(board):
    low = board.add(NewTask("write the notes", body="for Monday", priority=1))
    high = board.add(NewTask("  fix   the build ", priority=5, assignee="coder"))
    assert high.title == "fix the build"
    assert [t.id for t in board.list()] == [high.id, low.id]
    shown = board.show(low.id)
    assert (shown.body, shown.status, shown.assignee, shown.attempts) == (
        "for Monday",
        Status.TODO,
        "any",
        0,
    )
    assert shown.created_at == shown.updated_at > 0
    assert [t.id for t in board.list(assignee="coder")] == [high.id]
    assert board.list(statuses=[Status.DONE]) == []


def test_bad_input_is_refused_with_a_reason(board):
    with pytest.raises(KanbanError, match="needs a title"):
        board.add(NewTask("   "))
    with pytest.raises(TaskNotFound, match="no task 99"):
        board.show(99)
    with pytest.raises(TaskNotFound):
        board.add(NewTask("child", parent_id=42))


def test_update_and_assign(board):
    task = board.add(NewTask("draft"))
    changed = board.update(task.id, title="final draft", priority=3, assignee="writer")
    assert (changed.title, changed.priority, changed.assignee) == ("final draft", 3, "writer")


def test_blocked_tasks_are_not_ready_until_their_blockers_are_done(board):
    first = board.add(NewTask("first", priority=0))
    second = board.add(NewTask("second", priority=9, blocked_by=(first.id,)))
    assert board.show(second.id).blocked_by == (first.id,)
    assert board.show(first.id).blocks == (second.id,)
    lease = board.claim(A, 60)
    assert lease is not None and lease.task_id == first.id  # the urgent one waits
    assert board.claim(B, 60) is None
    board.complete(first.id, "done", lease=lease, author="worker-a")
    nxt = board.claim(B, 60)
    assert nxt is not None and nxt.task_id == second.id


def test_dependency_cycles_are_refused_with_the_chain(board):
    a, b, c = (board.add(NewTask(name)) for name in "abc")
    board.link(a.id, b.id)
    board.link(b.id, c.id)
    with pytest.raises(CycleError) as info:
        board.link(c.id, a.id)
    message = str(info.value)
    assert f"{a.id} → {b.id} → {c.id}" in message and "cycle" in message
    with pytest.raises(CycleError, match="cannot block itself"):
        board.link(a.id, a.id)
    board.link(a.id, c.id)  # a shortcut is no cycle
    assert board.show(c.id).blocked_by == (a.id, b.id)
    board.unlink(b.id, c.id)
    board.link(c.id, b.id)  # now legal: b no longer blocks c


def test_parent_cycles_are_refused(board):
    root = board.add(NewTask("root"))
    child = board.add(NewTask("child", parent_id=root.id))
    grandchild = board.add(NewTask("grandchild"))
    board.set_parent(grandchild.id, child.id)
    assert board.show(root.id).children == (child.id,)
    with pytest.raises(CycleError, match="its own ancestor"):
        board.set_parent(root.id, grandchild.id)
    with pytest.raises(CycleError):
        board.set_parent(root.id, root.id)


def test_comments_and_attachments(board):
    task = board.add(NewTask("research"))
    board.comment(task.id, "found two papers", author="worker-a")
    board.attach(task.id, "url", "https://example.org/paper", note="the better one")
    shown = board.show(task.id)
    assert [c.body for c in shown.comments][-1] == "found two papers"
    assert shown.comments[0].body.startswith("created by")
    assert [(a.kind, a.ref, a.note) for a in shown.attachments] == [
        ("url", "https://example.org/paper", "the better one")
    ]
    with pytest.raises(KanbanError, match="file or url"):
        board.attach(task.id, "blob", "x")


def test_claims_filter_by_assignee_and_by_id(board):
    coder = board.add(NewTask("code", assignee="coder"))
    anyone = board.add(NewTask("anything"))
    assert board.claim(A, 60, assignees=["writer"]) is None
    got = board.claim(A, 60, assignees=["coder"])
    assert got is not None and got.task_id == coder.id
    assert board.claim(B, 60, task_id=coder.id) is None  # already claimed
    mine = board.claim(B, 60, task_id=anyone.id)
    assert mine is not None and mine.task_id == anyone.id
    assert board.show(anyone.id).status is Status.CLAIMED


def test_concurrent_claims_never_share_a_task(board_factory):
    setup = board_factory()
    for i in range(40):
        setup.add(NewTask(f"task {i}"))
    boards = [board_factory() for _ in range(6)]
    got: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(len(boards))

    def worker(index: int) -> None:
        owner = ClaimOwner(f"w{index}", "host", index)
        start.wait()
        while (lease := boards[index].claim(owner, 60)) is not None:
            with lock:
                got.append(lease.task_id)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(boards))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == [t.id for t in sorted(setup.list(), key=lambda t: t.id)]
    assert Counter(c.task_id for c in setup.claims()).most_common(1)[0][1] == 1


def test_heartbeats_keep_a_lease_and_expiry_returns_the_task(board, clock):
    task = board.add(NewTask("long job"))
    lease = board.claim(A, 30)
    assert lease is not None
    board.start(lease, session_id="sess-1", pid=4321)
    clock.advance(20)
    board.heartbeat(lease, 30)
    clock.advance(20)
    assert board.reclaim_expired() == []  # renewed: 10 s left
    assert board.task_for_session("sess-1").id == task.id
    clock.advance(11)
    assert board.reclaim_expired() == [task.id]
    back = board.show(task.id)
    assert (back.status, back.attempts, back.lease_token) == (Status.TODO, 1, None)
    assert "expired" in back.comments[-1].body and "Back to todo" in back.comments[-1].body
    with pytest.raises(LeaseLost, match="expired"):
        board.heartbeat(lease, 30)
    again = board.claim(B, 30)
    assert again is not None and again.task_id == task.id
    with pytest.raises(LeaseLost):  # the old holder cannot finish the new holder's work
        board.complete(task.id, "late", lease=lease, author="worker-a")
    board.complete(task.id, "done", lease=again, author="worker-b")
    assert [c.outcome for c in board.claims(task.id)] == ["expired", "done"]


def test_releases_end_in_failed_after_max_attempts(board_factory):
    board = board_factory(max_attempts=2)
    task = board.add(NewTask("flaky"))
    first = board.claim(A, 60)
    assert board.release(first, "exited without reporting", author="a").status is Status.TODO
    second = board.claim(A, 60)
    failed = board.release(second, "crashed on import", author="a")
    assert failed.status is Status.FAILED and failed.attempts == 2
    assert "exited without reporting" in failed.result and "crashed on import" in failed.result
    assert board.claim(A, 60) is None
    with pytest.raises(InvalidTransition, match="already failed"):
        board.complete(task.id, "x", author="owner", override=True)


def test_completion_is_once_and_only_by_the_holder(board):
    task = board.add(NewTask("ship it"))
    lease = board.claim(A, 60)
    with pytest.raises(InvalidTransition, match="being worked by worker-a"):
        board.complete(task.id, "owner says done", author="owner")
    done = board.complete(task.id, "shipped", lease=lease, author="worker-a")
    assert (done.status, done.result, done.lease_token) == (Status.DONE, "shipped", None)
    with pytest.raises(InvalidTransition, match="already done"):
        board.complete(task.id, "again", lease=lease, author="worker-a")
    with pytest.raises(LeaseLost, match="never granted"):
        board.heartbeat("not-a-token", 60)


def test_the_owner_can_override_a_running_worker(board):
    task = board.add(NewTask("stuck"))
    lease = board.claim(A, 60)
    board.block(task.id, "waiting for the API key", author="owner", override=True)
    with pytest.raises(LeaseLost):
        board.complete(task.id, "done", lease=lease, author="worker-a")
    assert board.claims(task.id)[0].outcome == "overridden:blocked"


def test_block_unblock_review_approve_reject(board):
    task = board.add(NewTask("design"))
    lease = board.claim(A, 60)
    blocked = board.block(task.id, "needs the owner's choice of colour", lease=lease, author="a")
    assert (blocked.status, blocked.blocked_reason) == (Status.BLOCKED, blocked.blocked_reason)
    assert "colour" in blocked.blocked_reason
    with pytest.raises(KanbanError, match="say why"):
        board.block(task.id, " ", author="owner")
    assert board.claim(A, 60) is None
    assert board.unblock(task.id, author="owner", note="blue").status is Status.TODO
    lease = board.claim(B, 60)
    review = board.request_review(task.id, "mock-ups attached", lease=lease, author="b")
    assert review.status is Status.REVIEW and review.result == "mock-ups attached"
    assert board.reject(task.id, "too dark", author="owner").status is Status.TODO
    assert "too dark" in board.show(task.id).comments[-1].body
    lease = board.claim(B, 60)
    board.request_review(task.id, "lighter now", lease=lease, author="b")
    approved = board.approve(task.id, author="owner")
    assert approved.status is Status.DONE and approved.attempts == 0
    with pytest.raises(
        InvalidTransition, match="is done, not in review; there is nothing to approve"
    ):
        board.approve(task.id, author="owner", note="looks good")
    with pytest.raises(InvalidTransition, match="not blocked; there is nothing to unblock"):
        board.unblock(task.id, author="owner", note="fixed it")


def test_dead_workers_on_this_host_are_reclaimed(board):
    mine = board.add(NewTask("mine"))
    theirs = board.add(NewTask("theirs"))
    lease_a = board.claim(A, 600)
    lease_b = board.claim(B, 600)
    assert {lease_a.task_id, lease_b.task_id} == {mine.id, theirs.id}
    board.start(lease_a, session_id=None, pid=9999)
    assert board.reclaim_dead("host-a", lambda pid: pid != 9999) == [lease_a.task_id]
    assert board.reclaim_dead("host-a", lambda pid: False) == []  # host-b's is not ours
    assert "9999 on host-a is gone" in board.show(lease_a.task_id).comments[-1].body
    assert [c.outcome for c in board.claims(lease_a.task_id)] == ["dead"]
