"""Files people send through a chat entrance, saved into the gateway's workdir.

A new file is created, never an existing one opened: O_EXCL fails on anything already
there (a dangling symlink included), O_NOFOLLOW refuses a link as the final
component, and opening relative to the folder's own descriptor keeps every
component inside it. A taken name gets a numbered sibling (`notes-1.txt`). Names that
come from a platform are reduced to a safe base name first (`safe_file_name`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from pathlib import Path
from typing import BinaryIO

_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
MAX_NAME_TRIES = 1000
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


class InboxNameError(OSError):
    """Every numbered variant of a name is taken."""


def safe_file_name(name: str, fallback: str = "attachment") -> str:
    """A platform's file name as a plain base name: no folders, no leading dots, only
    letters, digits, spaces, '.', '_' and '-', at most 120 characters."""
    base = _UNSAFE.sub("_", Path(name.replace("\\", "/")).name).strip(" .")
    return base[:120] or fallback


def create_inbound_file(folder: Path, name: str) -> tuple[BinaryIO, str]:
    """A new file in `folder` named `name` (or `name-1`, `name-2` … when taken), open
    for writing, and the name it got."""
    folder.mkdir(parents=True, exist_ok=True)
    stem, suffix = Path(name).stem, Path(name).suffix
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for n in range(MAX_NAME_TRIES):
            candidate = name if n == 0 else f"{stem}-{n}{suffix}"
            try:
                fd = os.open(candidate, _CREATE_FLAGS, 0o600, dir_fd=directory)
            except (FileExistsError, IsADirectoryError):
                continue
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # a symlink in the way: take the next name
                    continue
                raise
            return os.fdopen(fd, "wb"), candidate
    finally:
        os.close(directory)
    raise InboxNameError(f"too many files named like {name!r} already; pick another name")


def discard_inbound_file(folder: Path, stored: str) -> None:
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stored, dir_fd=directory)
    finally:
        os.close(directory)


def save_inbound_file(folder: Path, name: str, data: bytes) -> Path:
    """Write `data` as a new file named after `name` in `folder`; its path."""
    stored_name = safe_file_name(name)
    handle, stored = create_inbound_file(folder, stored_name)
    try:
        with handle:
            handle.write(data)
    except BaseException:
        discard_inbound_file(folder, stored)
        raise
    return folder / stored


__all__ = [
    "InboxNameError",
    "create_inbound_file",
    "discard_inbound_file",
    "safe_file_name",
    "save_inbound_file",
]
