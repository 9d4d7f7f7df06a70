"""One line of an import's summary, and the context every step shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.importers.hermes.reader import HermesHome

SOURCE = "import:hermes"


@dataclass(frozen=True)
class Item:
    area: str  # config | secrets | soul | memory | skills | sessions | cron | kanban | profiles
    name: str
    outcome: str  # import | skip | already
    reason: str = ""

    def line(self, *, dry_run: bool) -> str:
        verb = {"import": "would import" if dry_run else "imported", "skip": "skipped",
                "already": "already imported"}[self.outcome]  # fmt: skip
        tail = f" ({self.reason})" if self.reason else ""
        return f"  {verb}: {self.name}{tail}"


@dataclass
class Run:
    source: HermesHome
    settings: Settings
    dry_run: bool
    secrets: bool
    items: list[Item] = field(default_factory=list)

    def add(self, area: str, name: str, outcome: str, reason: str = "") -> None:
        self.items.append(Item(area, name, outcome, reason))
