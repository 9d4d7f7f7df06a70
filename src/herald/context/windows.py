"""Context window sizes: config override, then a built-in table, then a conservative
default (with a one-time notice, since guessing too big means overflow errors)."""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)

# Longest prefix wins. Sizes in tokens, from the providers' published limits.
WINDOW_TABLE: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude-", 200_000),
    ("anthropic/claude", 200_000),
    ("openai/gpt-4.1", 1_047_576),
    ("openai/gpt-4o", 128_000),
    ("google/gemini", 1_048_576),
    ("gemini", 1_048_576),
    ("deepseek", 128_000),
    ("qwen", 32_768),
    ("llama-3", 128_000),
    ("mistral", 32_768),
    ("smollm2", 8_192),
)

_warned: set[str] = set()
_warned_lock = threading.Lock()


def lookup_window(model: str) -> int | None:
    name = model.lower()
    best: tuple[int, int] | None = None  # (prefix length, window)
    for prefix, window in WINDOW_TABLE:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best else None


def unknown_window_notice(model: str, default: int) -> str:
    return (
        f"context window of {model!r} is unknown; assuming {default:,} tokens "
        "(set model.context_length to the real size)"
    )


def resolve_context_window(
    model: str,
    *,
    override: int | None = None,
    reported: int | None = None,
    default: int = 32_768,
    notify=None,
    first_time=None,
) -> int:
    """`override` (config) beats `reported` (what the runtime knows, e.g. a GGUF's
    trained context) beats the table; unknown models get `default` and one notice per
    process, and only if `first_time(key)` (the home's memory of notices) says it is
    new there."""
    if override:
        return override
    if reported:
        return reported
    window = lookup_window(model)
    if window is not None:
        return window
    with _warned_lock:
        first = model not in _warned
        _warned.add(model)
    if first and first_time is not None:
        first = first_time(f"context-window-unknown:{model}:{default}")
    if first:
        message = unknown_window_notice(model, default)
        log.warning(message)
        if notify is not None:
            notify(message)
    return default
