"""Split one assistant message's tool calls into parallel and sequential segments.

`plan_tool_batch` is pure: it keeps the model's order and only decides which
neighbouring calls may run together.

- A call joins a parallel segment only if its tool is marked `parallel_safe`
  and its arguments parse; anything else runs on its own, in order.
- A tool with `reads`/`writes` arguments reserves the canonical path(s) it touches as a
  reader or a writer. A call that would write a path overlapping any earlier
  reservation of the segment, or read a path an earlier call of the segment
  writes, starts a new segment (overlap = same path or one inside the other).
- `clarify` is always a barrier (it waits for a human).
- A segment of one call is sequential; neighbouring sequential calls are merged.

Canonical path: the argument resolved against `cwd` (``~`` expanded),
normalised, and symlinks resolved where the path exists.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from herald.tools.registry import PathScope, ToolArgumentError, ToolSpec, parse_arguments

SegmentKind = Literal["parallel", "sequential"]
PARALLEL: SegmentKind = "parallel"
SEQUENTIAL: SegmentKind = "sequential"
BARRIER_TOOLS = frozenset({"clarify"})


class PlannableCall(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> str | dict[str, Any] | None: ...


C = TypeVar("C", bound=PlannableCall)
SpecLookup = Callable[[str], ToolSpec | None]


@dataclass(frozen=True)
class Reservation:
    path: str
    mode: str  # "read" | "write"


def canonical_path(path: str, cwd: str) -> str:
    expanded = os.path.expanduser(path)
    joined = expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)
    return os.path.realpath(os.path.normpath(joined))


def _overlaps(a: str, b: str) -> bool:
    if a == b:
        return True
    shorter, longer = (a, b) if len(a) < len(b) else (b, a)
    prefix = shorter if shorter.endswith(os.sep) else shorter + os.sep
    return longer.startswith(prefix)


def conflicts(new: Sequence[Reservation], held: Sequence[Reservation]) -> bool:
    """A writer overlapping anything held, or a reader overlapping a held writer."""
    for mine in new:
        for theirs in held:
            if "write" in (mine.mode, theirs.mode) and _overlaps(mine.path, theirs.path):
                return True
    return False


def reservations_for(
    scopes: Sequence[PathScope], args: dict[str, Any], cwd: str
) -> list[Reservation] | None:
    """The paths a call reserves; None when an argument is not a usable path."""
    out: list[Reservation] = []
    for scope in scopes:
        value = args.get(scope.argument)
        if value is None or value == "":
            value = "."  # tools default to the working directory
        if not isinstance(value, str):
            return None
        try:
            out.append(Reservation(canonical_path(value, cwd), scope.mode))
        except (OSError, ValueError):  # e.g. an embedded NUL byte
            return None
    return out


def plan_tool_batch(
    calls: Sequence[C],
    cwd: str,
    lookup: SpecLookup,
) -> list[tuple[SegmentKind, list[C]]]:
    """Segments in call order; `lookup` gives a call's spec (the turn's registry), None
    for a tool that is unknown or not enabled here."""
    segments: list[tuple[SegmentKind, list[C]]] = []
    group: list[C] = []
    held: list[Reservation] = []

    def emit(kind: SegmentKind, members: list[C]) -> None:
        if not members:
            return
        if len(members) == 1:
            kind = SEQUENTIAL
        if kind == SEQUENTIAL and segments and segments[-1][0] == SEQUENTIAL:
            segments[-1][1].extend(members)
        else:
            segments.append((kind, list(members)))

    for call in calls:
        reserved = _parallel_reservations(call, cwd, lookup)
        if reserved is None:
            emit(PARALLEL, group)
            group, held = [], []
            emit(SEQUENTIAL, [call])
            continue
        if conflicts(reserved, held):
            emit(PARALLEL, group)
            group, held = [], []
        group.append(call)
        held.extend(reserved)
    emit(PARALLEL, group)
    return segments


def _parallel_reservations(
    call: PlannableCall, cwd: str, lookup: SpecLookup
) -> list[Reservation] | None:
    """The call's reservations if it may join a parallel segment, else None."""
    if call.name in BARRIER_TOOLS:
        return None
    spec = lookup(call.name)
    if spec is None or not spec.parallel_safe:
        return None
    try:
        args = parse_arguments(call.arguments)
    except ToolArgumentError:
        return None
    return reservations_for(spec.path_scopes, args, cwd)
