"""Cancellation aborts the HTTP call promptly, stalled or mid-stream.

The bounds are generous correctness checks (the server stalls for 30 s; the
call must come back within 5), not benchmarks.
"""

from __future__ import annotations

import threading
import time

import pytest

from herald.providers.base import CallCancelled, CallSettings, StreamDelta
from herald.testing.fake_llm import Fault, Reply

APIS = ("openai", "anthropic")
MESSAGES = [{"role": "user", "content": "hello"}]
SETTINGS = CallSettings(model="fake-model")
STALL = 30.0
BOUND = 5.0


def _cancel_once_received(server, seconds: float = 0.2) -> threading.Event:
    """Set the event `seconds` after the server has the request (the first call of a
    transport also imports its SDK, which must not eat the stall)."""
    event = threading.Event()

    def fire() -> None:
        server.wait_for_requests(1, timeout=10)
        time.sleep(seconds)
        event.set()

    threading.Thread(target=fire, daemon=True).start()
    return event


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize(
    "stall", [Reply.text("too late", delay=STALL), Fault.timeout(STALL)], ids=["delay", "silent"]
)
def test_cancel_while_server_is_stalled(server, make_transport, api, stream, stall):
    transport = make_transport(api, timeout=60)
    server.enqueue(stall, Reply.text("next"))
    request = transport.build_request(MESSAGES, None, SETTINGS)
    cancel = _cancel_once_received(server)

    started = time.monotonic()
    with pytest.raises(CallCancelled):
        transport.call(request, stream=stream, cancel=cancel)
    assert time.monotonic() - started < BOUND

    # The transport stays usable after an abort.
    assert transport.call(request, stream=stream).text == "next"


@pytest.mark.parametrize("api", APIS)
def test_cancel_mid_stream(server, make_transport, api):
    transport = make_transport(api, timeout=60)
    text = "word " * 100  # 100 chunks at 0.3 s each: half a minute if not cancelled
    server.enqueue(Reply.text(text, chunk_size=5, chunk_delay=0.3))
    cancel = threading.Event()
    deltas: list[StreamDelta] = []

    def on_delta(delta: StreamDelta) -> None:
        deltas.append(delta)
        if len(deltas) == 2:
            cancel.set()

    started = time.monotonic()
    with pytest.raises(CallCancelled):
        transport.call(
            transport.build_request(MESSAGES, None, SETTINGS),
            stream=True,
            on_delta=on_delta,
            cancel=cancel,
        )
    assert time.monotonic() - started < BOUND
    assert 2 <= len(deltas) < 10


@pytest.mark.parametrize("api", APIS)
def test_cancel_from_another_thread_mid_stream(server, make_transport, api):
    transport = make_transport(api, timeout=60)
    server.enqueue(Reply.text("word " * 100, chunk_size=5, chunk_delay=0.3))
    cancel = _cancel_once_received(server, 0.8)
    started = time.monotonic()
    with pytest.raises(CallCancelled):
        transport.call(transport.build_request(MESSAGES, None, SETTINGS), cancel=cancel)
    assert time.monotonic() - started < BOUND


@pytest.mark.parametrize("api", APIS)
def test_already_cancelled_sends_nothing(server, make_transport, api):
    transport = make_transport(api)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CallCancelled):
        transport.call(transport.build_request(MESSAGES, None, SETTINGS), cancel=cancel)
    assert server.model_requests() == []


@pytest.mark.parametrize("api", APIS)
def test_unset_cancel_event_changes_nothing(server, make_transport, api):
    transport = make_transport(api)
    server.enqueue(Reply.text("fine", chunk_size=2))
    response = transport.call(
        transport.build_request(MESSAGES, None, SETTINGS), cancel=threading.Event()
    )
    assert response.text == "fine"
