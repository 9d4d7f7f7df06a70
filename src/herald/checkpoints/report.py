"""What `/rollback` and `herald checkpoints` say: one text for every surface."""

from __future__ import annotations

from herald.checkpoints.service import CheckpointService
from herald.checkpoints.store import Checkpoint, CheckpointError, CheckpointStore, RestoreResult

ROLLBACK_USAGE = "usage: /rollback [list | N] [PATH] [--clean]"
MAX_FILES_SHOWN = 5


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_FILES_SHOWN])
    more = len(paths) - MAX_FILES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def describe(store: CheckpointStore, checkpoint: Checkpoint, before: Checkpoint | None) -> str:
    what = checkpoint.tool + (f": {checkpoint.detail}" if checkpoint.detail else "")
    turn = f"turn {checkpoint.turn}  " if checkpoint.turn else ""
    changed = store.changed_files(checkpoint, before)
    files = f"{len(store.files(checkpoint))} files"
    if changed:
        files += f"; changed since the one before: {_names(changed)}"
    line = f"{checkpoint.number:>3}  {checkpoint.when}  {turn}{what}  ({files})"
    if checkpoint.left_out:
        line += (
            f"\n     left out: {_names([f'{p} ({why})' for p, why in checkpoint.left_out.items()])}"
        )
    return line


def list_text(store: CheckpointStore, limit: int = 20) -> str:
    found = store.list()
    if not found:
        return f"No checkpoints of {store.workdir} yet."
    lines = [f"Checkpoints of {store.workdir} (1 = newest):"]
    older = [*found[1:], None]
    lines += [describe(store, c, b) for c, b in zip(found[:limit], older, strict=False)]
    if len(found) > limit:
        lines.append(f"… and {len(found) - limit} older")
    return "\n".join(lines)


def restore_text(result: RestoreResult, path: str | None) -> str:
    what = f"{path} from" if path else "the workdir to"
    lines = [
        f"Restored {what} checkpoint {result.target.number} ({result.target.when}, "
        f"{result.target.tool}): {result.restored} files written."
    ]
    if result.removed:
        lines.append(f"Removed files created since: {_names(list(result.removed))}.")
    lines.append("The state before this restore is checkpoint 1 now: /rollback again undoes it.")
    return "\n".join(lines)


def rollback_command(service: CheckpointService, arg: str) -> str:
    """`/rollback` (the newest checkpoint), `/rollback list`, `/rollback N [PATH] [--clean]`."""
    why, store = service.refusal()
    if store is None:
        return f"No checkpoints here: {why}."
    words = arg.split()
    clean = "--clean" in words
    words = [w for w in words if w != "--clean"]
    if words[:1] == ["list"]:
        return list_text(store)
    number = 1
    if words and words[0].isdigit():
        number = int(words.pop(0))
    if len(words) > 1 or (words and words[0].startswith("-")):
        return ROLLBACK_USAGE
    path = words[0] if words else None
    try:
        return restore_text(store.restore(number, path=path, clean=clean), path)
    except CheckpointError as exc:
        return f"Cannot roll back: {exc}"
