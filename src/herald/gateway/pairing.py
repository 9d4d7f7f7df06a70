"""Pairing: how a stranger in a private chat becomes an allowed user.

The gateway gives an unknown user a one-time code (8 characters, no look-alikes,
expiring); the owner approves it with ``herald pairing approve CODE``, which moves
the user to the approved list. Both lists live in ``<home>/gateway/pairing.json``,
written atomically under a file lock because the CLI and the running gateway are
different processes. The gateway re-reads the file only when it changed.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8
MAX_PENDING = 20  # more strangers than this at once are ignored, not stored


class PairingError(LookupError):
    """An unknown or expired code, or an unknown user."""


@dataclass(frozen=True)
class PairingRequest:
    code: str
    platform: str
    user_id: str
    user_name: str | None
    chat_id: str
    created_at: float
    expires_at: float
    notified_at: float


@dataclass(frozen=True)
class ApprovedUser:
    platform: str
    user_id: str
    user_name: str | None
    approved_at: float

    @property
    def label(self) -> str:
        name = f" (@{self.user_name})" if self.user_name else ""
        return f"{self.platform}:{self.user_id}{name}"


def pairing_path(home_root: Path) -> Path:
    return home_root / "gateway" / "pairing.json"


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class PairingStore:
    def __init__(self, path: Path, *, ttl: float = 3600.0, clock: Callable[[], float] = time.time):
        self.path = path
        self.ttl = ttl
        self.clock = clock
        self._cache: tuple[tuple[int, int], dict[str, Any]] | None = None

    # ---- file -----------------------------------------------------------------------------

    def _lock(self) -> Any:
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.path) + ".lock", timeout=10)

    def _load(self) -> dict[str, Any]:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return {"pending": {}, "approved": {}}
        stamp = (stat.st_mtime_ns, stat.st_size)
        if self._cache is not None and self._cache[0] == stamp:
            return self._cache[1]
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            data.setdefault("pending", {})
            data.setdefault("approved", {})
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable pairing file %s: %s", self.path, exc)
            data = {"pending": {}, "approved": {}}
        self._cache = (stamp, data)
        return data

    def _save(self, data: dict[str, Any]) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".pairing.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2, ensure_ascii=False)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._cache = None

    def _prune(self, data: dict[str, Any]) -> None:
        now = self.clock()
        data["pending"] = {
            code: req for code, req in data["pending"].items() if req.get("expires_at", 0) > now
        }

    # ---- queries --------------------------------------------------------------------------

    def is_approved(self, platform: str, user_id: str) -> bool:
        return f"{platform}:{user_id}" in self._load()["approved"]

    def pending(self) -> list[PairingRequest]:
        now = self.clock()
        return [
            PairingRequest(**req)
            for req in self._load()["pending"].values()
            if req.get("expires_at", 0) > now
        ]

    def approved(self) -> list[ApprovedUser]:
        return [ApprovedUser(**user) for user in self._load()["approved"].values()]

    # ---- changes --------------------------------------------------------------------------

    def request(
        self,
        platform: str,
        user_id: str,
        user_name: str | None,
        chat_id: str,
        *,
        remind_after: float,
    ) -> tuple[PairingRequest | None, bool]:
        """(the user's pending request, whether to tell them the code now). None when
        too many strangers are already waiting."""
        with self._lock():
            data = dict(self._load())
            self._prune(data)
            now = self.clock()
            for code, req in data["pending"].items():
                if req["platform"] == platform and req["user_id"] == user_id:
                    if now - req["notified_at"] < remind_after:
                        return PairingRequest(**req), False
                    req = {**req, "notified_at": now}
                    data["pending"] = {**data["pending"], code: req}
                    self._save(data)
                    return PairingRequest(**req), True
            if len(data["pending"]) >= MAX_PENDING:
                return None, False
            code = new_code()
            while code in data["pending"]:
                code = new_code()
            request = PairingRequest(
                code, platform, user_id, user_name, chat_id, now, now + self.ttl, now
            )
            data["pending"] = {**data["pending"], code: asdict(request)}
            self._save(data)
            return request, True

    def approve(self, code: str) -> ApprovedUser:
        code = code.strip().upper()
        with self._lock():
            data = dict(self._load())
            self._prune(data)
            req = data["pending"].get(code)
            if req is None:
                raise PairingError(
                    f"no pending pairing code {code!r} (codes expire after "
                    f"{self.ttl / 60:.0f} minutes; `herald pairing list` shows the pending ones)"
                )
            user = ApprovedUser(req["platform"], req["user_id"], req["user_name"], self.clock())
            data["pending"] = {c: r for c, r in data["pending"].items() if c != code}
            data["approved"] = {**data["approved"], f"{user.platform}:{user.user_id}": asdict(user)}
            self._save(data)
            return user

    def revoke(self, user: str) -> list[ApprovedUser]:
        """Remove approvals matching ``platform:user_id``, ``user_id`` or ``@name``."""
        wanted = user.strip()
        with self._lock():
            data = dict(self._load())
            removed: list[ApprovedUser] = []
            kept: dict[str, Any] = {}
            for key, entry in data["approved"].items():
                approved = ApprovedUser(**entry)
                names = {key, approved.user_id}
                if approved.user_name:
                    names.add("@" + approved.user_name.lstrip("@"))
                if wanted in names:
                    removed.append(approved)
                else:
                    kept[key] = entry
            if not removed:
                raise PairingError(f"no approved user matches {wanted!r}")
            data["approved"] = kept
            self._save(data)
            return removed


__all__ = [
    "ApprovedUser",
    "PairingError",
    "PairingRequest",
    "PairingStore",
    "new_code",
    "pairing_path",
]
