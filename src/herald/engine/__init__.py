"""Turn engine (L4): one turn — prologue, iterations, retries, tool rounds, finalize.

`Agent` holds one session; `Agent.run_turn(text)` returns a `TurnResult` whose
`exit_reason` always names why the turn ended.
"""

from herald.engine.agent import Agent, AgentOptions, title_from
from herald.engine.budget import IterationBudget
from herald.engine.callbacks import TurnCallbacks
from herald.engine.handle import Humans, TurnHandle
from herald.engine.ports import TranscriptStore
from herald.engine.repair import (
    CANCELLED_RESULT,
    INTERRUPTED_RESULT,
    RepairReport,
    repair_transcript,
)
from herald.engine.result import COMPLETED_REASONS, ExitReason, TurnResult
from herald.engine.steer import STEER_HEADER, SteerQueue
from herald.engine.transcript import PersistenceError

__all__ = [
    "CANCELLED_RESULT",
    "COMPLETED_REASONS",
    "INTERRUPTED_RESULT",
    "STEER_HEADER",
    "Agent",
    "AgentOptions",
    "ExitReason",
    "Humans",
    "IterationBudget",
    "PersistenceError",
    "RepairReport",
    "SteerQueue",
    "TranscriptStore",
    "TurnCallbacks",
    "TurnHandle",
    "TurnResult",
    "repair_transcript",
    "title_from",
]
