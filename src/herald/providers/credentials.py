"""A pool of API keys for one provider, with cool-downs that survive restarts.

Keys are used in the order they were configured (``NAME``, ``NAME_2`` …). A key
that hits a limit is *exhausted* until a cool-down chosen by the error class
passes; a key the provider calls invalid or revoked is *dead* for good (until
it is replaced). State lives in a JSON file shared by every pool of the home,
keyed by provider and a SHA-256 fingerprint of the key — never the key itself —
and written atomically under a file lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.providers.errors import FailoverReason

if TYPE_CHECKING:
    from herald.config.schema import CredentialsConfig

log = logging.getLogger(__name__)

STATE_VERSION = 1
OK, EXHAUSTED, DEAD = "ok", "exhausted", "dead"


def fingerprint(key: str) -> str:
    """A stable, non-reversible name for a key (enough to tell keys apart)."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KeyStatus:
    """What `status()` reports for one key: never the key, only its position,
    fingerprint and state."""

    index: int
    fingerprint: str
    state: str  # ok | exhausted | dead
    reason: str | None
    until: float | None  # when an exhausted key becomes usable again


class CredentialPool:
    def __init__(
        self,
        provider: str,
        keys: list[str],
        *,
        state_path: Path | None,
        cooldowns: CredentialsConfig | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.provider = provider
        self._keys = list(dict.fromkeys(k for k in keys if k))
        self._state_path = Path(state_path) if state_path is not None else None
        if cooldowns is None:
            from herald.config.schema import CredentialsConfig

            cooldowns = CredentialsConfig()
        self._cooldowns = cooldowns
        self._clock = clock
        self._lock = threading.RLock()
        self._entries: dict[str, dict[str, Any]] = {}
        self._load()

    # -- queries ---------------------------------------------------------------

    @property
    def keys(self) -> list[str]:
        return list(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def _entry_id(self, key: str) -> str:
        return f"{self.provider}:{fingerprint(key)}"

    def _state_of(self, key: str) -> tuple[str, dict[str, Any] | None]:
        entry = self._entries.get(self._entry_id(key))
        if not entry:
            return OK, None
        state = entry.get("state", OK)
        if state == EXHAUSTED and float(entry.get("until", 0)) <= self._clock():
            return OK, entry
        return state, entry

    def is_usable(self, key: str) -> bool:
        with self._lock:
            return self._state_of(key)[0] == OK

    def current(self) -> str | None:
        """The first usable key, in configured order; None when all are cooling down
        or dead (or there are none)."""
        with self._lock:
            for key in self._keys:
                if self._state_of(key)[0] == OK:
                    return key
            return None

    def best_effort(self) -> str | None:
        """The key to try when none is usable: a cooling-down key that recovers first
        (dead keys last), so a pool never refuses outright — the provider decides."""
        with self._lock:
            usable = self.current()
            if usable is not None or not self._keys:
                return usable
            cooling = [
                (float(entry.get("until", 0)), key)
                for key in self._keys
                for state, entry in [self._state_of(key)]
                if state == EXHAUSTED and entry is not None
            ]
            return min(cooling)[1] if cooling else self._keys[0]

    def status(self) -> list[KeyStatus]:
        with self._lock:
            result = []
            for index, key in enumerate(self._keys, start=1):
                state, entry = self._state_of(key)
                result.append(
                    KeyStatus(
                        index=index,
                        fingerprint=fingerprint(key),
                        state=state,
                        reason=entry.get("reason") if entry and state != OK else None,
                        until=float(entry["until"]) if entry and state == EXHAUSTED else None,
                    )
                )
            return result

    # -- updates ---------------------------------------------------------------

    def _cooldown_for(self, reason: FailoverReason) -> float | None:
        if reason == FailoverReason.RATE_LIMIT:
            return self._cooldowns.rate_limit_cooldown
        if reason == FailoverReason.BILLING:
            return self._cooldowns.billing_cooldown
        if reason == FailoverReason.AUTH:
            return self._cooldowns.auth_cooldown
        return None

    def report_failure(self, key: str, reason: FailoverReason | str) -> None:
        """Mark `key` after a failure. Only key-related reasons change its state:
        rate_limit/billing/auth exhaust it for a cool-down, auth_permanent kills it."""
        reason = FailoverReason(reason)
        if key not in self._keys:
            return
        now = self._clock()
        if reason == FailoverReason.AUTH_PERMANENT:
            entry = {"state": DEAD, "reason": reason.value, "since": now}
        else:
            cooldown = self._cooldown_for(reason)
            if cooldown is None:
                return
            entry = {
                "state": EXHAUSTED,
                "reason": reason.value,
                "since": now,
                "until": now + cooldown,
            }
        with self._lock:
            self._entries[self._entry_id(key)] = entry
            self._save({self._entry_id(key): entry})
        log.info(
            "%s key #%d marked %s (%s)",
            self.provider,
            self._keys.index(key) + 1,
            entry["state"],
            reason.value,
        )

    def rotate(self, reason: FailoverReason | str) -> str | None:
        """Mark the current key with `reason` and return the next usable key, or None."""
        with self._lock:
            key = self.current()
            if key is not None:
                self.report_failure(key, reason)
            return self.current()

    def report_success(self, key: str) -> None:
        with self._lock:
            entry_id = self._entry_id(key)
            if key not in self._keys or entry_id not in self._entries:
                return
            del self._entries[entry_id]
            self._save({entry_id: None})

    # -- persistence -------------------------------------------------------------

    def _load(self) -> None:
        data = _read_state(self._state_path)
        ours = {f"{self.provider}:{fingerprint(k)}" for k in self._keys}
        self._entries = {k: v for k, v in data.items() if k in ours and isinstance(v, dict)}

    def _save(self, changes: dict[str, dict[str, Any] | None]) -> None:
        """Merge `changes` into the shared file (other pools and processes write it too)."""
        path = self._state_path
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with _file_lock(path):
                data = _read_state(path, quiet=True)
                for entry_id, entry in changes.items():
                    if entry is None:
                        data.pop(entry_id, None)
                    else:
                        data[entry_id] = entry
                _write_atomic(path, {"version": STATE_VERSION, "keys": data})
        except OSError as exc:
            log.warning("could not save credential state to %s: %s", path, exc)


def _read_state(path: Path | None, *, quiet: bool = False) -> dict[str, Any]:
    if path is None or not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        keys = raw.get("keys") if isinstance(raw, dict) else None
        if not isinstance(keys, dict):
            raise ValueError("no 'keys' object")
        return keys
    except (OSError, ValueError) as exc:
        if not quiet:
            log.warning("ignoring unreadable credential state %s: %s", path, exc)
        return {}


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    from filelock import FileLock

    with FileLock(str(path) + ".lock", timeout=10):
        yield


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
