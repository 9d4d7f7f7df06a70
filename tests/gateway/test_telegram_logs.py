"""The bot token never reaches a log: python-telegram-bot and httpx log request URLs,
which hold the token, and errors quote them."""

from __future__ import annotations

import logging

from herald.gateway.platforms.telegram.logs import MASK, TokenMaskingFilter

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


def record(message: str, *args: object, exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord("httpx", logging.INFO, __file__, 1, message, args, exc_info)


def test_a_token_in_a_request_url_is_masked() -> None:
    entry = record(
        'HTTP Request: POST %s "HTTP/1.1 200 OK"', f"https://api.example/bot{TOKEN}/getMe"
    )
    TokenMaskingFilter().filter(entry)
    assert TOKEN not in entry.getMessage() and MASK in entry.getMessage()


def test_a_token_in_an_error_is_masked() -> None:
    entry = record("send failed", exc=RuntimeError(f"cannot reach /bot{TOKEN}/sendMessage"))
    TokenMaskingFilter().filter(entry)
    assert entry.exc_text is not None
    assert TOKEN not in entry.exc_text and MASK in entry.exc_text


def test_text_without_a_token_is_left_alone() -> None:
    entry = record("update 123456 handled at 12:30 in chat -100200300")
    TokenMaskingFilter().filter(entry)
    assert entry.getMessage() == "update 123456 handled at 12:30 in chat -100200300"


def test_a_long_run_of_digits_is_read_once() -> None:
    digits = 200_000
    # The pattern went back over a digit run from each digit: 20,000 took 2.5 s, this
    # many would take over ten minutes, on the thread that logs.
    entry = record("payload %s then %s", "7" * digits, f"/bot{TOKEN}/x")
    TokenMaskingFilter().filter(entry)
    assert TOKEN not in entry.getMessage() and entry.getMessage().count("7") >= digits
