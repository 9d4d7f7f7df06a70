"""Backoff bounds and the interruptible sleep."""

from __future__ import annotations

import threading
import time

import pytest

from herald.providers.backoff import backoff_delay, sleep_interruptible


@pytest.mark.parametrize("attempt", range(8))
def test_backoff_is_exponential_with_bounded_jitter(attempt):
    step = min(30.0, 1.0 * 2**attempt)
    low = backoff_delay(attempt, base=1.0, cap=30.0, rng=lambda: 0.0)
    high = backoff_delay(attempt, base=1.0, cap=30.0, rng=lambda: 0.999999)
    assert low == pytest.approx(step / 2)
    assert step / 2 <= high <= step
    assert high <= 30.0


def test_backoff_grows_then_caps():
    delays = [backoff_delay(n, base=0.5, cap=8.0, rng=lambda: 0.5) for n in range(10)]
    assert delays == sorted(delays)
    assert max(delays) <= 8.0


def test_backoff_honours_retry_after_but_not_past_the_cap():
    assert backoff_delay(0, base=1.0, cap=30.0, retry_after=12.0, rng=lambda: 0.0) == 12.0
    assert backoff_delay(0, base=1.0, cap=30.0, retry_after=90.0) == 30.0
    # a retry_after shorter than the computed delay does not shorten it
    assert backoff_delay(4, base=1.0, cap=30.0, retry_after=0.1, rng=lambda: 0.0) == 8.0


def test_backoff_zero_cap_means_no_wait():
    assert backoff_delay(3, base=1.0, cap=0.0, retry_after=5) == 0.0


def test_sleep_interruptible_completes_without_cancel():
    started = time.monotonic()
    assert sleep_interruptible(0.05, None) is True
    assert sleep_interruptible(0.05, threading.Event()) is True
    assert time.monotonic() - started >= 0.1


def test_sleep_interruptible_wakes_early_when_cancelled():
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    started = time.monotonic()
    assert sleep_interruptible(30.0, cancel) is False
    assert time.monotonic() - started < 5.0


def test_sleep_interruptible_already_cancelled_returns_at_once():
    cancel = threading.Event()
    cancel.set()
    started = time.monotonic()
    assert sleep_interruptible(30.0, cancel) is False
    assert time.monotonic() - started < 1.0
