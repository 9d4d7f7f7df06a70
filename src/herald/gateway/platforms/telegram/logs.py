"""Keep the bot token out of the logs.

The Bot API puts the token in every URL (`…/bot123456:AAE…/sendMessage`), and httpx logs
each request's URL at INFO while python-telegram-bot logs its base URL at DEBUG. A filter
on exactly those loggers masks the token, whether or not it is registered as a secret
(an inline token in config.yaml is not).
"""

from __future__ import annotations

import logging
import re

# From the first digit of a run only: the same tokens, but a long run of digits in a
# logged message is read once, not again from each digit (20,000 took 2.5 s).
TOKEN_IN_TEXT = re.compile(r"(?<!\d)\d{3,}:[A-Za-z0-9_-]{20,}")
MASK = "<telegram-bot-token>"
# Loggers that write request URLs; a logger's filters do not apply to its children.
URL_LOGGERS = (
    "httpx",
    "telegram.Bot",
    "telegram.ext.ExtBot",
    "telegram.ext.Updater",
    "telegram.ext.Application",
)


class TokenMaskingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if TOKEN_IN_TEXT.search(message):
            record.msg, record.args = TOKEN_IN_TEXT.sub(MASK, message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text and TOKEN_IN_TEXT.search(record.exc_text):
            record.exc_text = TOKEN_IN_TEXT.sub(MASK, record.exc_text)
        return True


def mask_tokens_in_logs() -> None:
    """Install the filter once per logger (idempotent)."""
    for name in URL_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, TokenMaskingFilter) for f in logger.filters):
            logger.addFilter(TokenMaskingFilter())
