"""Homes as a whole (L6, beside the surfaces: it reads every store of a home): back
one up while it runs, verify and restore a backup, and read the format versions of
everything in it (config_version and each database's schema version) so an older
Herald refuses a newer home instead of corrupting it.

What a backup takes is `walk_home`'s answer: everything but logs, caches, earlier
backups, run files, checkpoint repositories and (unless asked) ``.env``; symlinks are
never followed, in either direction.
"""

from herald.homes.backup import (
    BackupError,
    Manifest,
    VerifyReport,
    backups_dir,
    create_backup,
    list_backups,
    prune_backups,
    read_manifest,
    resolve_target,
    verify_backup,
)
from herald.homes.layout import UnsafePathError, safe_relative, walk_home
from herald.homes.restore import RestoreReport, restore_backup
from herald.homes.versions import VersionCheck, inspect_home, known_versions, newer_than_this_herald

__all__ = [
    "BackupError",
    "Manifest",
    "RestoreReport",
    "UnsafePathError",
    "VerifyReport",
    "VersionCheck",
    "backups_dir",
    "create_backup",
    "inspect_home",
    "known_versions",
    "list_backups",
    "newer_than_this_herald",
    "prune_backups",
    "read_manifest",
    "resolve_target",
    "restore_backup",
    "safe_relative",
    "verify_backup",
    "walk_home",
]
