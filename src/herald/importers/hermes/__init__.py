"""`herald import hermes`: move into Herald from a hermes-agent home (L6).

The hermes home is untrusted input (see `reader`): nothing in it is followed, run or
trusted. Each area is one step; each step reports every item it met, imported or
skipped with the reason, and is idempotent, so a dry run and a real run print the
same summary and a second real run imports nothing twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from herald.importers.hermes.content import import_memories, import_skills
from herald.importers.hermes.history import import_cron, import_kanban, import_sessions, report_rest
from herald.importers.hermes.items import SOURCE, Item, Run
from herald.importers.hermes.reader import HermesHome, UnsafeSource
from herald.importers.hermes.settings_map import import_config, import_secrets, import_soul

if TYPE_CHECKING:
    from herald.config import Settings

AREAS = ("config", "secrets", "soul", "memory", "skills", "sessions", "cron", "profiles", "kanban")
_STEPS = (import_config, import_secrets, import_soul, import_memories, import_skills,
          import_sessions, import_cron, import_kanban, report_rest)  # fmt: skip


class ImportSourceError(ValueError):
    """The --from path is not a hermes home."""


def default_source() -> Path:
    return Path.home() / ".hermes"


def import_hermes(source: Path, settings: Settings, *, dry_run: bool, secrets: bool) -> Run:
    root = source.expanduser().absolute()
    if root.is_symlink() or not root.is_dir():
        raise ImportSourceError(f"{root} is not a directory: pass the hermes home with --from")
    home = HermesHome(root)
    if not any(home.exists(n) for n in ("config.yaml", "state.db", "memories/MEMORY.md")):
        raise ImportSourceError(
            f"{root} does not look like a hermes home (no config.yaml, state.db or memories): "
            "pass it with --from"
        )
    run = Run(home, settings, dry_run=dry_run, secrets=secrets)
    for step in _STEPS:
        step(run)
    return run


def summary(run: Run) -> str:
    head = "Dry run: nothing was written." if run.dry_run else "Import finished."
    lines = [f"{head} From {run.source.root} into {run.settings.home.root}:"]
    for area in AREAS:
        items = [i for i in run.items if i.area == area]
        if not items:
            continue
        counts = {o: sum(1 for i in items if i.outcome == o) for o in ("import", "already", "skip")}
        verb = "to import" if run.dry_run else "imported"
        lines.append(f"{area}: {counts['import']} {verb}, {counts['already']} already there, "
                     f"{counts['skip']} skipped")  # fmt: skip
        lines += [i.line(dry_run=run.dry_run) for i in items]
    return "\n".join(lines)


__all__ = [
    "SOURCE",
    "ImportSourceError",
    "Item",
    "Run",
    "UnsafeSource",
    "default_source",
    "import_hermes",
    "summary",
]
