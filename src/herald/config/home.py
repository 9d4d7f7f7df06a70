"""Where Herald keeps its files: the home directory and profiles.

`$HERALD_HOME` (default ``~/.herald``) is the base home. A profile is a
complete home of its own under ``<base>/profiles/<name>/``, selected with
``--profile NAME`` or ``HERALD_PROFILE``.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from herald.config.schema_identities import OWNER

PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

# Subdirectories every home has (DESIGN.md, "Home layout").
HOME_DIRS = ("memories", "skills", "plugins", "cron", "logs", "cache", "profiles")


class ProfileNameError(ValueError):
    """A profile name that could escape the home or is otherwise unusable."""


def base_home() -> Path:
    """The base home: `$HERALD_HOME` or ``~/.herald`` (HERALD_HOME is one of the
    two environment variables Herald reads outside the secrets accessor)."""
    raw = os.environ.get("HERALD_HOME")
    return Path(raw).expanduser() if raw else Path.home() / ".herald"


def validate_profile_name(name: str) -> str:
    if not PROFILE_NAME_RE.match(name) or name in {".", ".."}:
        raise ProfileNameError(
            f"invalid profile name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


@dataclass(frozen=True)
class HeraldHome:
    """One complete home. All paths Herald writes are derived from `root`."""

    root: Path
    profile: str | None = None

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def env_path(self) -> Path:
        return self.root / ".env"

    @property
    def state_db(self) -> Path:
        return self.root / "state.db"

    @property
    def soul_path(self) -> Path:
        return self.root / "SOUL.md"

    @property
    def memories_dir(self) -> Path:
        return self.root / "memories"

    def user_memory_dir(self, identity: str = OWNER) -> Path:
        """``memories/users/<identity>/``: that identity's USER.md (who they are), so what
        one person told Herald about themselves is never in another's prompt. The owner's
        is moved here from ``memories/USER.md`` the first time it is asked for (a home
        from before identities: everything in it was the owner's)."""
        if not identity or identity in (".", "..") or "/" in identity or "\\" in identity:
            raise ValueError(f"not an identity name: {identity!r}")
        folder = self.memories_dir / "users" / identity
        if identity == OWNER:
            _adopt_legacy_user_file(self.memories_dir / "USER.md", folder / "USER.md")
        return folder

    def user_memory_file(self, identity: str = OWNER) -> Path:
        return self.user_memory_dir(identity) / "USER.md"

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    @property
    def plugins_dir(self) -> Path:
        return self.root / "plugins"

    @property
    def cron_dir(self) -> Path:
        return self.root / "cron"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def profiles_dir(self) -> Path:
        return self.root / "profiles"

    @property
    def history_file(self) -> Path:
        return self.root / "cache" / "cli_history"

    @property
    def credentials_state_path(self) -> Path:
        return self.root / "cache" / "credentials.json"

    @property
    def profile_label(self) -> str:
        return self.profile or "default"

    def ensure(self) -> HeraldHome:
        """Create the layout (idempotent). Memory files start empty."""
        self.root.mkdir(parents=True, exist_ok=True)
        for name in HOME_DIRS:
            if name == "profiles" and self.profile is not None:
                continue  # a profile is a leaf: it has no profiles of its own
            (self.root / name).mkdir(exist_ok=True)
        for path in (self.memories_dir / "MEMORY.md", self.user_memory_file(OWNER)):
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
        try:  # the home holds secrets and history: owner-only where the OS allows
            os.chmod(self.root, 0o700)
        except OSError:
            pass
        return self


def _adopt_legacy_user_file(legacy: Path, owners: Path) -> None:
    """Move the pre-identity USER.md to the owner's place, once. A rename is atomic, so
    a second process doing the same finds the file gone and the owner's in place."""
    if owners.exists() or not legacy.exists():
        return
    owners.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.replace(legacy, owners)


def resolve_home(profile: str | None = None, *, create: bool = True) -> HeraldHome:
    """The home for `profile` (falls back to `HERALD_PROFILE`, then the base)."""
    chosen = profile if profile is not None else (os.environ.get("HERALD_PROFILE") or None)
    base = base_home()
    if chosen is not None and chosen != "default":
        home = HeraldHome(base / "profiles" / validate_profile_name(chosen), profile=chosen)
    else:
        home = HeraldHome(base)
    return home.ensure() if create else home
