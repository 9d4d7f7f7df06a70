"""Many threads, several stores, several processes, and a kill -9."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

from herald.state import StateStore

THREADS = 8
PER_THREAD = 25

CHILD_APPEND_FOREVER = """
import sys
from pathlib import Path
from herald.state import StateStore

store = StateStore(Path(sys.argv[1]))
sid = sys.argv[2]
n = 0
while True:
    stored = store.append_message(sid, {"role": "user", "content": f"durable {n}"})
    print(stored.id, n, flush=True)
    n += 1
"""

CHILD_APPEND_N = """
import sys
from pathlib import Path
from herald.state import StateStore

with StateStore(Path(sys.argv[1])) as store:
    for n in range(int(sys.argv[4])):
        store.append_message(sys.argv[2], {"role": "user", "content": f"{sys.argv[3]} {n}"})
"""


def run_threads(target: object, count: int) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def wrapped(index: int) -> None:
        try:
            barrier.wait()
            target(index)  # type: ignore[operator]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def assert_gap_free(store: StateStore, sid: str, expected: set[str]) -> None:
    messages = store.get_messages(sid, include_inactive=True)
    assert [m.seq for m in messages] == list(range(1, len(expected) + 1))
    assert {m.content for m in messages} == expected
    positions = [m.position for m in messages]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert store.get_messages(sid) == messages


def test_concurrent_appends_from_threads(store: StateStore) -> None:
    sid = store.create_session()
    side = store.create_session()

    def work(index: int) -> None:
        for n in range(PER_THREAD):
            store.append_message(sid, {"role": "user", "content": f"t{index} m{n}"})
            if n % 5 == 0:
                store.append_messages(side, [{"role": "assistant", "content": f"s{index} {n}"}])
                store.add_session_usage(sid, prompt_tokens=1, api_calls=1)
            store.get_messages(sid)  # readers interleave with the writer
            store.search_messages(f"t{index}")

    assert run_threads(work, THREADS) == []
    assert_gap_free(store, sid, {f"t{i} m{n}" for i in range(THREADS) for n in range(PER_THREAD)})
    assert store.count_messages(side) == THREADS * 5
    session = store.get_session(sid)
    assert session is not None
    assert (session.prompt_tokens, session.api_calls) == (THREADS * 5, THREADS * 5)
    assert len(store.search_messages("t3", limit=100)) == PER_THREAD


def test_two_stores_on_one_file(db_path: Path) -> None:
    with StateStore(db_path) as first, StateStore(db_path) as second:
        sid = first.create_session(title="shared")
        assert second.get_session(sid).title == "shared"  # type: ignore[union-attr]
        stores = [first, second]

        def work(index: int) -> None:
            target = stores[index % 2]
            for n in range(PER_THREAD):
                target.append_message(sid, {"role": "user", "content": f"w{index} {n}"})

        assert run_threads(work, 4) == []
        expected = {f"w{i} {n}" for i in range(4) for n in range(PER_THREAD)}
        assert_gap_free(first, sid, expected)
        assert_gap_free(second, sid, expected)
        rows = second.get_messages(sid)
        first.archive_and_compact(
            sid, [m.id for m in rows[:10]], [{"role": "user", "content": "S"}]
        )
        assert second.get_messages(sid)[0].content == "S"
        assert len(second.search_messages("S")) == 1


def test_two_processes_append_to_one_session(db_path: Path) -> None:
    with StateStore(db_path) as store:
        sid = store.create_session()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD_APPEND_N, str(db_path), sid, name, str(PER_THREAD)]
        )
        for name in ("alpha", "beta")
    ]
    assert [child.wait(timeout=60) for child in children] == [0, 0]
    with StateStore(db_path) as store:
        assert_gap_free(
            store, sid, {f"{name} {n}" for name in ("alpha", "beta") for n in range(PER_THREAD)}
        )


def test_acknowledged_messages_survive_kill_9(db_path: Path) -> None:
    with StateStore(db_path) as store:
        sid = store.create_session()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_APPEND_FOREVER, str(db_path), sid],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    watchdog = threading.Timer(60, child.kill)  # never hang the suite if the child stalls
    watchdog.start()
    acknowledged: dict[int, str] = {}
    try:
        while len(acknowledged) < 150:
            line = child.stdout.readline()
            assert line, "child exited before acknowledging enough messages"
            message_id, n = line.split()
            acknowledged[int(message_id)] = f"durable {n}"
        child.send_signal(signal.SIGKILL)  # while it keeps appending
        child.wait(timeout=30)
        # Lines written before the kill were acknowledged too.
        for line in child.stdout.read().splitlines():
            parts = line.split()
            if len(parts) == 2:
                acknowledged[int(parts[0])] = f"durable {parts[1]}"
    finally:
        watchdog.cancel()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    with StateStore(db_path) as store:
        stored = {m.id: m.content for m in store.get_messages(sid)}
        for message_id, content in acknowledged.items():
            assert stored.get(message_id) == content
        assert [m.seq for m in store.get_messages(sid)] == list(range(1, len(stored) + 1))
        assert len(store.search_messages("durable", limit=10_000)) == len(stored)
        after = store.append_message(sid, {"role": "user", "content": "after the crash"})
        assert after.seq == len(stored) + 1
