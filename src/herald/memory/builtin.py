"""`BuiltinMemory`: add / replace / remove entries of MEMORY.md and USER.md.

Every write follows the same path: validate, `scan_text(kind="memory")`
(blocked text is refused with the reason), take the file lock, re-read the
file, run the clobber guard, apply the change, de-duplicate, check the size
limit and replace the file atomically, but only if it is still the file that
was read (else all of that runs again on the fresh text: `update_shared_file`,
so a lock that lets two writers in costs a retry, never an entry). Nothing here
raises for a bad request:
each call returns a `MemoryWriteResult` whose message says what happened and
what to do next, together with the live entries and usage.

The clobber guard: the instance remembers the file text it last read or
wrote. If the disk differs at write time, someone else changed the file (a
human in an editor, another Herald process). An `add`, or a change to an entry
that is still exactly as this instance saw it, is applied to the fresh disk
text, so the other edit is kept. A `replace` or `remove` whose target entry
was itself changed or removed meanwhile would overwrite that edit: it is
refused, the disk text is copied to `<file>.bak`, and the message explains
how to retry against the live entries.

Consecutive failures are counted; after `max_consecutive_failures` the tool
refuses further writes until a write succeeds or `reset_failures()` is called
(the memory manager does that at the start of each turn), so a model cannot
loop on a refused write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import herald.safety as safety
from herald.config import HeraldHome
from herald.config.schema_memory import MemoryConfig
from herald.config.shared_file import SharedFileConflict
from herald.memory.entries import (
    FILE_NAMES,
    TARGETS,
    dedupe,
    displayable,
    file_text,
    find_matches,
    format_usage,
    has_separator_line,
    normalized,
    parse_entries,
    size_of,
)
from herald.memory.files import MemoryFiles, MemoryLockTimeout

log = logging.getLogger(__name__)

Action = Literal["add", "replace", "remove"]
ACTIONS: tuple[Action, ...] = ("add", "replace", "remove")
EXCERPT_CHARS = 80

WriteListener = Callable[[str, str, str], None]  # (target, action, content)


@dataclass(frozen=True)
class MemoryWriteResult:
    """The outcome of one memory call, with the live entries of its file."""

    success: bool
    action: str
    target: str
    message: str
    entries: tuple[str, ...] = ()
    used: int = 0
    limit: int = 0
    backup: str | None = None
    changed: bool = False  # the file was rewritten
    content: str = ""  # the entry text written (add, replace) or removed (remove)

    @property
    def usage(self) -> str:
        return format_usage(self.target, self.used, self.limit) if self.target in FILE_NAMES else ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"success": self.success}
        out["message" if self.success else "error"] = self.message
        if self.target in FILE_NAMES:
            out["usage"] = self.usage
            out["entries"] = list(self.entries)
        if self.backup:
            out["backup"] = self.backup
        return out


@dataclass
class _Change:
    """What one action does to the fresh entries, or why it cannot."""

    entries: list[str] | None = None
    message: str = ""
    error: str | None = None
    conflict: str | None = None
    content: str = ""
    notes: list[str] = field(default_factory=list)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"


class BuiltinMemory:
    """MEMORY.md (the agent's notes) and USER.md (who the user is) of one home."""

    def __init__(
        self, home: HeraldHome, config: MemoryConfig | None = None, *, identity: str = "owner"
    ) -> None:
        self.home = home
        self.config = config or MemoryConfig()
        self.identity = identity  # whose memory this reads and writes
        # The owner's notes stay at memories/MEMORY.md; anyone else's notes live beside
        # their USER.md, so neither person's notes reach the other's prompt.
        own = home.user_memory_dir(identity)
        notes = home.memories_dir if identity == "owner" else own
        self.files = MemoryFiles(notes, user_dir=own)
        self._failures = 0
        self._lock = threading.Lock()  # one write at a time within this process
        self._listeners: list[WriteListener] = []

    # -- reading -------------------------------------------------------------

    def limit(self, target: str) -> int:
        if target == "user":
            return self.config.user_char_limit
        return self.config.memory_char_limit

    def entries(self, target: str) -> list[str]:
        """The raw entries on disk now (remembered as seen by this instance)."""
        return parse_entries(self.files.read(_check_target(target)))

    def view(self, target: str) -> MemoryWriteResult:
        """The live entries (poisoned ones as placeholders) and usage, as a result."""
        entries = self.entries(target)
        return self._result(True, "view", target, "", entries)

    # -- failure cap -----------------------------------------------------------

    @property
    def consecutive_failures(self) -> int:
        return self._failures

    def reset_failures(self) -> None:
        self._failures = 0

    def add_listener(self, listener: WriteListener) -> None:
        """Called with (target, action, content) after every successful write."""
        self._listeners.append(listener)

    # -- writing ---------------------------------------------------------------

    def apply(
        self,
        action: str,
        target: str,
        content: str | None = None,
        old_text: str | None = None,
    ) -> MemoryWriteResult:
        """Run one `memory` tool call. Never raises for a bad request."""
        with self._lock:
            if self._failures >= self.config.max_consecutive_failures:
                return self._capped(action, target)
            result = self._apply(action, target, content, old_text)
            self._failures = 0 if result.success else self._failures + 1
        if result.changed:
            for listener in list(self._listeners):
                try:
                    listener(result.target, result.action, result.content)
                except Exception:  # a mirror must never undo or fail a write on disk
                    log.warning("memory write listener %r failed", listener, exc_info=True)
        return result

    def add(self, target: str, content: str) -> MemoryWriteResult:
        return self.apply("add", target, content=content)

    def replace(self, target: str, old_text: str, content: str) -> MemoryWriteResult:
        return self.apply("replace", target, content=content, old_text=old_text)

    def remove(self, target: str, old_text: str) -> MemoryWriteResult:
        return self.apply("remove", target, old_text=old_text)

    def _capped(self, action: str, target: str) -> MemoryWriteResult:
        message = (
            f"{self._failures} memory writes failed in a row, so this one was not attempted. "
            "Stop retrying memory for now: carry on with the user's request, and mention what "
            "you wanted to remember if it matters. Memory writes work again next turn."
        )
        if target in FILE_NAMES:
            return self._result(False, action, target, message, self.entries(target))
        return MemoryWriteResult(False, action, str(target), message)

    def _apply(
        self, action: str, target: str, content: str | None, old_text: str | None
    ) -> MemoryWriteResult:
        problem = _argument_problem(action, target, content, old_text)
        if problem is not None:
            if target in FILE_NAMES:
                return self._result(False, action, target, problem, self.entries(target))
            return MemoryWriteResult(False, str(action), str(target), problem)
        content = (content or "").strip()
        old_text = (old_text or "").strip()
        if action in ("add", "replace"):
            scan = safety.scan_text(content, kind="memory")  # the scanner loads on first write
            if scan.blocked:
                message = (
                    "refused: memory is shown to you in every future session, so text that "
                    "reads as instructions, leaks secrets or hides characters is not stored ("
                    + "; ".join(scan.reasons)
                    + "). Save the plain fact in your own words, without commands or secrets."
                )
                return self._result(False, action, target, message, self.entries(target))
        try:
            result, seen_text = self.files.update(
                target, lambda disk_text: self._decide(action, target, content, old_text, disk_text)
            )
        except (MemoryLockTimeout, SharedFileConflict) as exc:
            return self._result(False, action, target, str(exc), self._readable_entries(target))
        except OSError as exc:  # disk full, permissions: say so instead of failing the turn
            message = (
                f"could not write {FILE_NAMES[target]}: {exc.strerror or exc}; nothing was "
                "changed. Tell the user, who can check the memories folder."
            )
            return self._result(False, action, target, message, self._readable_entries(target))
        self.files.mark_seen(target, seen_text)
        return result

    def _readable_entries(self, target: str) -> list[str]:
        try:
            return self.entries(target)
        except OSError:
            return []

    def _decide(
        self, action: str, target: str, content: str, old_text: str, disk_text: str
    ) -> tuple[str | None, tuple[MemoryWriteResult, str]]:
        """The transform run under the lock: the new file text (None: write nothing),
        the result, and the text this instance has now seen. It may run again on fresher
        text, so its one side effect (the conflict backup) is simply redone then."""
        seen_text = self.files.last_seen(target)
        disk = parse_entries(disk_text)
        seen = parse_entries(seen_text) if seen_text is not None else disk
        changed_on_disk = seen_text is not None and seen_text != disk_text
        if action == "add":
            change = _add(disk, content)
        else:
            change = _edit(action, disk, seen, content, old_text, changed_on_disk)
        name = FILE_NAMES[target]
        if change.conflict is not None:
            backup = self.files.save_backup(target, disk_text)
            message = (
                f"{name} was changed on disk since this session last read it (an edit by the "
                f"user or another Herald process) and {change.conflict}. Nothing was written, so "
                f"that edit is not lost; the file as it is now is saved in {backup.name}. Read "
                "the live entries below and redo your change against them if it is still needed."
            )
            # The live entries are shown with the refusal, so they count as seen.
            refused = self._result(False, action, target, message, disk, backup=str(backup))
            return None, (refused, disk_text)
        if change.error is not None or change.entries is None:
            return None, (self._result(False, action, target, change.error or "", disk), disk_text)
        new_entries = dedupe(change.entries)
        limit = self.limit(target)
        new_size = size_of(new_entries)
        if new_size > limit and new_size > size_of(disk):
            message = _over_limit(name, new_size, limit, content)
            return None, (self._result(False, action, target, message, disk), disk_text)
        notes = list(change.notes)
        if changed_on_disk:
            notes.append(f"merged with changes made to {name} on disk since the last read")
        if new_entries == disk:
            return None, (self._result(True, action, target, _UNCHANGED, disk), disk_text)
        new_text = file_text(new_entries)
        message = change.message + ("" if not notes else " (" + "; ".join(notes) + ")")
        written = self._result(
            True, action, target, message, new_entries, changed=True, content=change.content
        )
        return new_text, (written, new_text)

    def _result(
        self,
        success: bool,
        action: str,
        target: str,
        message: str,
        entries: list[str],
        *,
        backup: str | None = None,
        changed: bool = False,
        content: str = "",
    ) -> MemoryWriteResult:
        return MemoryWriteResult(
            success=success,
            action=action,
            target=target,
            message=message,
            entries=tuple(displayable(entries)),
            used=size_of(entries),
            limit=self.limit(target),
            backup=backup,
            changed=changed,
            content=content,
        )


_UNCHANGED = "no change: the file already says this"


def _check_target(target: str) -> str:
    if target not in FILE_NAMES:
        raise ValueError(f"unknown memory target {target!r}; use one of {', '.join(TARGETS)}")
    return target


def _argument_problem(
    action: str, target: str, content: str | None, old_text: str | None
) -> str | None:
    if action not in ACTIONS:
        return f"unknown action {action!r}; use one of {', '.join(ACTIONS)}"
    if target not in FILE_NAMES:
        return (
            f"unknown target {target!r}; use 'memory' (your notes, MEMORY.md) or "
            "'user' (who the user is, USER.md)"
        )
    if action in ("add", "replace") and not (isinstance(content, str) and content.strip()):
        return f"{action} needs non-empty content"
    if action in ("replace", "remove") and not (isinstance(old_text, str) and old_text.strip()):
        return (
            f"{action} needs old_text: a short piece of the entry to change, unique to it "
            "(see the entries listed)"
        )
    if isinstance(content, str) and has_separator_line(content):
        return "content must not contain a line holding only '§' (that line separates entries)"
    return None


def _add(disk: list[str], content: str) -> _Change:
    key = normalized(content)
    if any(normalized(entry) == key for entry in disk):
        return _Change(entries=list(disk), message=_UNCHANGED)
    return _Change(entries=[*disk, content], message="entry added", content=content)


def _edit(
    action: str,
    disk: list[str],
    seen: list[str],
    content: str,
    old_text: str,
    changed_on_disk: bool,
) -> _Change:
    matches = find_matches(disk, old_text)
    if changed_on_disk:
        conflict = _clobber(disk, seen, matches, old_text)
        if conflict is not None:
            return _Change(conflict=conflict)
    if not matches:
        return _Change(
            error=f"no entry contains {old_text!r}; pick a short piece of one of the entries "
            "listed below, exactly as written"
        )
    if len(matches) > 1:
        shown = "; ".join(f"[{i + 1}] {_excerpt(disk[i])}" for i in matches)
        return _Change(
            error=f"{len(matches)} entries contain {old_text!r} ({shown}); use a longer piece "
            "that only the entry you mean contains"
        )
    index = matches[0]
    entries = list(disk)
    if action == "remove":
        del entries[index]
        return _Change(
            entries=entries, message=f"entry removed: {_excerpt(disk[index])}", content=disk[index]
        )
    if normalized(disk[index]) == normalized(content):
        return _Change(entries=entries, message=_UNCHANGED)
    entries[index] = content
    notes = []
    if any(normalized(e) == normalized(content) for i, e in enumerate(disk) if i != index):
        notes.append("it repeated another entry, so the two were merged")
    return _Change(entries=entries, message="entry replaced", content=content, notes=notes)


def _clobber(disk: list[str], seen: list[str], matches: list[int], old_text: str) -> str | None:
    """Why applying the edit to the disk text would overwrite someone else's edit."""
    seen_keys = {normalized(entry) for entry in seen}
    for index in matches:
        if normalized(disk[index]) not in seen_keys:
            return f"the entry containing {old_text!r} now reads {_excerpt(disk[index])!r}"
    if not matches and find_matches(seen, old_text):
        return f"the entry containing {old_text!r} was changed or removed there"
    return None


def _over_limit(name: str, new_size: int, limit: int, content: str) -> str:
    over = new_size - limit
    alone = (
        f" The new text alone is {len(content):,} chars: shorten it."
        if len(content) > limit // 2
        else ""
    )
    return (
        f"{name} would be {new_size:,}/{limit:,} chars with this change ({over:,} over the "
        f"limit), so nothing was written.{alone} Consolidate now, in this turn: merge related "
        "entries or drop stale ones with replace/remove (the entries are listed below), then "
        "retry."
    )
