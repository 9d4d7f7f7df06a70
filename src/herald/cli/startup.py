"""The cyclic garbage collector during a one-shot's start-up.

Start-up imports a few hundred modules and builds the config models, the agent and
its tools: some 90,000 objects that live as long as the process. Left alone, the
collector walks them again and again while they are made (one full collection alone
cost about 50 ms of a one-shot's 0.6 s of CPU) and once more at exit, and finds
almost nothing (about 3,000 objects of start-up garbage). So the one-shot entry
point pauses it; once the agent is built and before the turn starts, the survivors
are moved out of its reach (`gc.freeze`) and it runs as usual for the turn, whose
garbage it collects as before.

Only the process entry point pauses (`herald.cli.quick.main_if_oneshot`); code that
runs a one-shot inside another process (the typer app under a test runner) never
pauses, and `resume_collection()` then does nothing.
"""

from __future__ import annotations

import gc

_paused = False


def pause_collection() -> None:
    """Stop automatic collection until `resume_collection()` (for a process's start-up only)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collection() -> None:
    """Start-up is over: keep what it made out of later collections and collect again.
    Does nothing unless `pause_collection()` stopped the collector."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
