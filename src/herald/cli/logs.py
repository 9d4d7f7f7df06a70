"""Logging for the surfaces: everything to `$HERALD_HOME/logs/herald.log`, redacted;
to stderr only with --verbose (stderr belongs to the user, not to library chatter)."""

from __future__ import annotations

import logging
import logging.handlers
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.config import Settings

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFilter(logging.Filter):
    """Masks secrets in every record before any handler formats it (invariant 10)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from herald.safety import redact

        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg = redact(message)
        record.args = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def setup_logging(settings: Settings, *, verbose: bool = False) -> None:
    from herald.safety import register_secret_values

    register_secret_values(settings.secrets.secret_values())
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_herald", False):
            root.removeHandler(handler)
    handlers: list[logging.Handler] = []
    try:
        settings.home.logs_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(
            logging.handlers.RotatingFileHandler(
                settings.home.logs_dir / "herald.log",
                maxBytes=5_000_000,
                backupCount=3,
                encoding="utf-8",
            )
        )
    except OSError:
        pass  # an unwritable log dir must not stop a turn
    if verbose:
        handlers.append(logging.StreamHandler())
    for handler in handlers:
        handler._herald = True  # type: ignore[attr-defined]
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handler.addFilter(RedactingFilter())
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    # Library chatter (HTTP client request lines) stays out of the log.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
