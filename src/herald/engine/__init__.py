"""Turn engine (L4): one turn — prologue, iterations, retries, tool rounds, finalize.

`Agent` is one session; `Agent.start_turn(text, callbacks=..., humans=...)` returns
the turn's `TurnHandle`, whose `result()` is a `TurnResult` with an `exit_reason`
that always names why the turn ended. The stages take a frozen `TurnContext`.
"""

from herald.engine.agent import Agent, AgentOptions, title_from
from herald.engine.budget import IterationBudget
from herald.engine.callbacks import TurnCallbacks
from herald.engine.handle import Humans, TurnHandle
from herald.engine.hygiene import ContextStatus
from herald.engine.options import SessionSeed
from herald.engine.ports import AgentSpawner, ChildAgent, TranscriptStore
from herald.engine.repair import (
    CANCELLED_RESULT,
    INTERRUPTED_RESULT,
    RepairReport,
    repair_transcript,
)
from herald.engine.result import COMPLETED_REASONS, ExitReason, TurnResult
from herald.engine.steer import STEER_HEADER, SteerQueue
from herald.engine.transcript import PersistenceError
from herald.engine.turn_context import TurnContext

__all__ = [
    "CANCELLED_RESULT",
    "COMPLETED_REASONS",
    "INTERRUPTED_RESULT",
    "STEER_HEADER",
    "Agent",
    "AgentOptions",
    "AgentSpawner",
    "ChildAgent",
    "ContextStatus",
    "ExitReason",
    "Humans",
    "IterationBudget",
    "PersistenceError",
    "RepairReport",
    "SessionSeed",
    "SteerQueue",
    "TranscriptStore",
    "TurnCallbacks",
    "TurnContext",
    "TurnHandle",
    "TurnResult",
    "repair_transcript",
    "title_from",
]
