"""`StreamRedactor`: whatever way a reply is cut into deltas, what leaves is exactly
what redacting the whole reply gives, and no released piece holds a secret."""

from __future__ import annotations

import random

import pytest

from herald.gateway.platforms.api.stream import StreamRedactor
from herald.safety import redact

CUSTOM = "zq81-Ke7pLw0-Tmx5Rv2Nd9c"
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBf0aQK1GJg2vZ6H0z5Xz8h6QK2Xj0Ajd3O4v5pQxAAAAJi5x7yZuce8\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
TEXTS = [
    "Your key: sk-proj-abc123def456ghi789jkl012mno, keep it safe.",
    'Config: {"password": "correct horse battery staple", "user": "ann"} done',
    "Use Authorization: Bearer abcDEF123456ghiJKL789 for the call.",
    "export OPENAI_API_KEY=sk-abc123def456ghi789jkl0 then run",
    f"custom secret {CUSTOM} appears\nand again {CUSTOM}.",
    f"Here is the key:\n{PEM}\nthat was it.",
    "password: hunter two three\nnext line",
    'Nothing secret here, just a long sentence with "quotes" and\nnew lines.',
]


def cuts(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    pieces, i = [], 0
    while i < len(text):
        step = rng.randint(1, 6)
        pieces.append(text[i : i + step])
        i += step
    return pieces


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("seed", range(8))
def test_streamed_redaction_equals_whole_text_redaction(text: str, seed: int) -> None:
    redactor = StreamRedactor([CUSTOM])
    released: list[str] = []
    for piece in cuts(text, seed):
        released.append(redactor.feed(piece))
        so_far = "".join(released)
        assert CUSTOM not in so_far
        assert "abc123def456" not in so_far and "horse battery" not in so_far
        assert "b3BlbnNzaC1rZXkt" not in so_far and "abcDEF123456" not in so_far
        assert "hunter" not in so_far
    released.append(redactor.flush())
    assert "".join(released) == redact(text, extra_secrets=[CUSTOM])


def test_text_is_released_as_it_arrives() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("Hello there") == "Hello "
    assert redactor.feed(" world") == "there "
    assert redactor.flush() == "world"
