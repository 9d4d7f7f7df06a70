"""How many threads llama.cpp gets: every core by default, HERALD_LOCAL_THREADS when
set (a machine busy with other work), and a clear error for a value that is not one."""

from __future__ import annotations

import os

import pytest

from herald.providers.local.model_file import LocalModelUnavailable
from herald.providers.local.runtime import MAX_DEFAULT_THREADS, THREADS_ENV, default_threads


def test_every_usable_core_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    cores = len(os.sched_getaffinity(0))
    assert default_threads() == max(1, min(cores, MAX_DEFAULT_THREADS))


@pytest.mark.parametrize("value", ["1", "3", " 12 "])
def test_the_setting_is_the_number_of_threads(monkeypatch: pytest.MonkeyPatch, value) -> None:
    monkeypatch.setenv(THREADS_ENV, value)
    assert default_threads() == int(value)  # above the default's cap too: it is asked for


@pytest.mark.parametrize(
    "value", ["0", "-2", "two", "1.5", "2 threads", "²", "257", "99999999999999999999"]
)
def test_a_value_that_is_not_a_thread_count_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, value
) -> None:
    monkeypatch.setenv(THREADS_ENV, value)
    with pytest.raises(LocalModelUnavailable) as refused:
        default_threads()
    assert THREADS_ENV in str(refused.value) and repr(value.strip()) in str(refused.value)
    assert "whole number from 1 to 256" in str(refused.value)


def test_a_blank_setting_means_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_ENV, "  ")
    assert default_threads() == max(1, min(len(os.sched_getaffinity(0)), MAX_DEFAULT_THREADS))
