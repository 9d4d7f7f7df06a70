"""Iteration budget accounting and the steer queue."""

from __future__ import annotations

import threading

import pytest

from herald.engine import IterationBudget, SteerQueue


def test_budget_consumes_refunds_and_stops():
    budget = IterationBudget(2)
    assert budget.try_consume() and budget.try_consume()
    assert not budget.try_consume()
    assert budget.exhausted_by() == "own"
    budget.refund()
    assert budget.remaining == 1 and budget.try_consume()


def test_child_budget_draws_from_parent():
    parent = IterationBudget(3)
    child = IterationBudget(10, parent=parent)
    assert all(child.try_consume() for _ in range(3))
    assert not child.try_consume()
    assert child.exhausted_by() == "parent"
    assert parent.used == 3 and child.used == 3
    child.refund()
    assert parent.used == 2


def test_budget_rejects_nonsense():
    with pytest.raises(ValueError):
        IterationBudget(0)


def test_budget_is_thread_safe():
    budget = IterationBudget(1000)
    threads = [
        threading.Thread(target=lambda: [budget.try_consume() for _ in range(200)])
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert budget.used == 1000 and not budget.try_consume()


def test_steer_queue_joins_and_drains_once():
    q = SteerQueue()
    assert q.drain() is None
    q.push("  first ")
    q.push("")
    q.push("second")
    assert bool(q)
    assert q.drain() == "first\nsecond"
    assert q.drain() is None and not q
