"""The built-in memory as system-prompt blocks, taken once when a session starts.

The snapshot is frozen with the prompt (DESIGN invariants 1 and 7): writes
made during the session go to disk at once and reach the prompt from the next
session on; the tool result shows the live entries meanwhile. Entries are
re-scanned here because the files are human-editable: a poisoned entry is
shown as a placeholder, while the file keeps the text for a human to review.
"""

from __future__ import annotations

import logging

from herald.config import HeraldConfig, HeraldHome
from herald.config.schema_memory import MemoryConfig
from herald.memory.builtin import BuiltinMemory
from herald.memory.entries import displayable, format_usage, render_entries, size_of

log = logging.getLogger(__name__)

HEADINGS = {"memory": "## Memory (your notes)", "user": "## About the user"}
INTROS = {
    "memory": "Notes you saved in earlier sessions with the memory tool (target memory).",
    "user": "What you have learned about the user (memory tool, target user).",
}


def memory_blocks(memory: BuiltinMemory) -> list[str]:
    """One Markdown block per non-empty file, memory first."""
    blocks: list[str] = []
    for target in ("memory", "user"):
        try:
            entries = memory.entries(target)
        except OSError as exc:  # unreadable: the session starts without it, said in the log
            log.warning("memory file for %s is unreadable, left out of the prompt: %s", target, exc)
            continue
        if not entries:
            continue
        usage = format_usage(target, size_of(entries), memory.limit(target))
        body = render_entries(displayable(entries))
        blocks.append(f"{HEADINGS[target]}\n{INTROS[target]} [{usage}]\n\n{body}")
    return blocks


def snapshot_blocks(
    home: HeraldHome, config: HeraldConfig | MemoryConfig | None = None
) -> list[str]:
    """The built-in memory blocks for a new session's system prompt."""
    section = config.memory if isinstance(config, HeraldConfig) else config
    return memory_blocks(BuiltinMemory(home, section))
