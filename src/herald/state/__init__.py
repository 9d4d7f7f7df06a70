"""State (L5): `$HERALD_HOME/state.db` — sessions and their lineage, append-only
messages with a full-text index, frozen system prompts and per-call usage, in
one SQLite file (WAL, foreign keys, forward-only migrations) that several
threads and processes can share."""

from herald.state.errors import StateError
from herald.state.premigration import online_copy
from herald.state.records import SearchHit, SessionRecord, StoredMessage, UsageRecord
from herald.state.spend import Spent
from herald.state.store import StateStore

__all__ = [
    "SearchHit",
    "SessionRecord",
    "Spent",
    "StateError",
    "StateStore",
    "StoredMessage",
    "UsageRecord",
    "online_copy",
]
