"""The runner's stream to SSE clients passes on a model call's text only once that call
has ended well; a failed (retried) attempt's text never leaves."""

from __future__ import annotations

from herald.gateway.stream import StreamRedactor


def test_a_discarded_attempt_never_reaches_the_client():
    sent: list[str] = []
    stream = StreamRedactor(sent.append)
    for piece in ("partial0 ", "partial1 ", "part"):
        stream.feed(piece)
    assert sent == []  # nothing leaves while the attempt may still fail
    stream.discard()
    for piece in ("the real ", "answer"):
        stream.feed(piece)
    stream.flush()
    assert "".join(sent) == "the real answer"


def test_text_before_tool_calls_leaves_when_the_call_ended():
    sent: list[str] = []
    stream = StreamRedactor(sent.append)
    stream.feed("Let me look that up. ")
    stream.release()  # the model asked for tools: its call is complete
    assert "".join(sent) == "Let me look that up. "
    stream.feed("Found it.")
    stream.discard()  # a failed retry after the tools does not take back the first text
    stream.feed("Found it, really.")
    stream.flush()
    assert "".join(sent) == "Let me look that up. Found it, really."
