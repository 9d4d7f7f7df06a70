"""`HolographicProvider`: the bundled external memory (`memory.provider: holographic`).

Settings come from `config.memory.holographic` (db_path relative to the home,
dimension, min_trust, decay_half_life_days, max_results) when that section
exists; values passed to the constructor win over it, and the defaults below
apply when neither says anything.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any

from herald.memory.holographic.records import FactHit
from herald.memory.holographic.store import DEFAULT_DIMENSION, FactStore
from herald.memory.holographic.tool import FACT_STORE_SCHEMA, run_fact_store
from herald.memory.provider import MemoryProvider

DEFAULTS: dict[str, Any] = {
    "db_path": "memories/facts.db",
    "dimension": DEFAULT_DIMENSION,
    "min_trust": 0.2,
    "decay_half_life_days": None,
    "max_results": 8,
}
# A recalled fact must be about the message, not merely share one common word with it.
# The prefetch goes into every message, asked for or not: on LoCoMo (questions of the
# seven shared conversations, both speakers' stores) a floor of 0.45 showed 7.3 facts
# a message (about 1,100 characters), one in ten of them evidence; 0.55 shows 3.4
# (530 characters), one in 5.5. The prefetch alone then finds less (hit@10 0.647 ->
# 0.558) but what the model reads with `session_search`'s results finds more (0.847
# -> 0.853): weak facts no longer push the tool's results down. 0.5 to 0.65 measure
# about the same; past 0.6 one question in seven gets no fact at all.
PREFETCH_MIN_RELEVANCE = 0.55
PREFETCH_MAX_CHARS = 300

_UNSET: Any = object()

SYSTEM_PROMPT_BLOCK = (
    "You have a long-term fact store, the `fact_store` tool. Facts relevant to the user's "
    "message may appear in a <memory-context> block as '#id (trust) text'. When you learn "
    "a durable fact (a preference, a person, a project detail), add it as one short "
    "statement with a category; search, probe, related or reason to recall; update or "
    "remove facts that are wrong, and give feedback (helpful true/false) on facts you used "
    "so that trust follows reality."
)


def _section(config: Any) -> Any:
    memory = getattr(config, "memory", None)
    return getattr(memory, "holographic", None)


class HolographicProvider(MemoryProvider):
    name = "holographic"

    def __init__(
        self,
        *,
        db_path: str | Path = _UNSET,
        dimension: int = _UNSET,
        min_trust: float = _UNSET,
        decay_half_life_days: float | None = _UNSET,
        max_results: int = _UNSET,
        clock: Callable[[], float] = time.time,
    ) -> None:
        given = {
            "db_path": db_path,
            "dimension": dimension,
            "min_trust": min_trust,
            "decay_half_life_days": decay_half_life_days,
            "max_results": max_results,
        }
        self._overrides = {key: value for key, value in given.items() if value is not _UNSET}
        self._clock = clock
        self._store: FactStore | None = None
        self.settings: dict[str, Any] = {**DEFAULTS, **self._overrides}

    # -- lifecycle ---------------------------------------------------------

    def initialize(
        self, *, home: Any, config: Any, secrets: Any = None, identity: str | None = None
    ) -> None:
        """`identity`: whose facts these are. The owner's live at ``db_path``; anyone
        else's in a database of their own beside their USER.md, so a fact learned from one
        person is never recalled into another's turn."""
        section = _section(config)
        settings = dict(DEFAULTS)
        if section is not None:
            for key in DEFAULTS:
                if hasattr(section, key):
                    settings[key] = getattr(section, key)
        settings.update(self._overrides)
        self.settings = settings
        # A HeraldHome names its folder .root; a plain path is the folder itself (a
        # PurePath has a .root too, the filesystem's: "/").
        root = Path(home) if isinstance(home, (str, PurePath)) else Path(home.root)
        if self._store is not None:
            self._store.close()
        path = root / Path(settings["db_path"]).expanduser()
        if identity is not None and identity != "owner" and hasattr(home, "user_memory_dir"):
            path = home.user_memory_dir(identity) / path.name
        self._store = FactStore(
            path,
            dimension=int(settings["dimension"]),
            min_trust=float(settings["min_trust"]),
            decay_half_life_days=settings["decay_half_life_days"],
            max_results=int(settings["max_results"]),
            clock=self._clock,
        )

    @property
    def store(self) -> FactStore:
        if self._store is None:
            raise RuntimeError("HolographicProvider.initialize() has not been called")
        return self._store

    def shutdown(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def backup_paths(self) -> list[Path]:
        return [self.store.path] if self._store is not None else []

    # -- the MemoryProvider contract ---------------------------------------

    def system_prompt_block(self) -> str:
        return SYSTEM_PROMPT_BLOCK

    def recall(self, query: str) -> list[FactHit]:
        """The facts `prefetch` shows for `query`, best first: those that clear the
        relevance floor (marked used). Their `score` (relevance x trust x decay) orders
        them and is one scale for every store, so lists from several stores can be
        merged by it."""
        if self._store is None or not isinstance(query, str) or not query.strip():
            return []
        hits = [
            hit
            for hit in self._store.search(query, limit=int(self.settings["max_results"]))
            if hit.parts.get("relevance", 0.0) >= PREFETCH_MIN_RELEVANCE
        ]
        if hits:
            self._store.mark_used([hit.fact.id for hit in hits])
        return hits

    def prefetch(self, query: str) -> str:
        """Bullet lines '- #id (trust 0.70) text' for the facts that clear the
        relevance floor (`recall`); '' when none does."""
        hits = self.recall(query)
        if not hits:
            return ""
        lines = []
        for hit in hits:
            text = hit.fact.content
            if len(text) > PREFETCH_MAX_CHARS:
                text = text[: PREFETCH_MAX_CHARS - 1] + "…"
            lines.append(f"- #{hit.fact.id} (trust {hit.fact.trust:.2f}) {text}")
        return "\n".join(lines)

    def sync_turn(self, user: str, assistant: str) -> None:
        """Nothing: facts enter the store only when the model adds them with
        `fact_store` (an explicit, reviewable act), never by scraping turns."""

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(FACT_STORE_SCHEMA)]

    def handle_tool_call(self, name: str, arguments: dict[str, Any]) -> str:
        if name != "fact_store":
            return super().handle_tool_call(name, arguments)
        return run_fact_store(
            self.store, arguments, default_limit=int(self.settings["max_results"])
        )
