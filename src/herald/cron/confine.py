"""Where a job may deliver, by who made it.

A job's target decides where text the model wrote ends up, so it is a write like
any other. The owner at the CLI (``created_by='cli'``) may deliver anywhere the
write gate allows; a job the model made with the ``cronjob`` tool (``'tool'``),
or a row older than this record (``'unknown'``), may deliver only to the log,
to a file under ``<home>/cron/output/`` and to the chat it was created from
(``origin``). The check runs when the job is made and again at every delivery,
because a row can be edited after the fact.

Files under ``cron/output`` are opened one path component at a time without
following symlinks, so a link planted there cannot carry a write outside.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from herald.config import HeraldHome


@dataclass(frozen=True)
class DeliveryTarget:
    kind: Literal["log", "file", "platform"]
    path: Path | None = None
    platform: str | None = None
    chat_id: str | None = None
    thread_id: str | None = None


OWNER = "cli"
MODEL = "tool"
CREATED_BY = (OWNER, MODEL, "unknown")


def output_dir(home: HeraldHome) -> Path:
    return Path(home.cron_dir) / "output"


def confined_relative(path: Path, home: HeraldHome) -> Path | None:
    """`path` below ``cron/output`` (lexically, after ``~`` and ``..``), relative to it;
    None when it points elsewhere. Symlinks are not resolved here: the safe opener
    refuses them component by component."""
    target = Path(os.path.normpath(os.path.abspath(path)))
    base = output_dir(home)
    for root in (Path(os.path.normpath(os.path.abspath(base))), Path(os.path.realpath(base))):
        try:
            rel = target.relative_to(root)
        except ValueError:
            continue
        if rel.parts and ".." not in rel.parts:
            return rel
    return None


def delivery_refusal(
    target: DeliveryTarget, target_text: str, home: HeraldHome, *, job_name: str,
    created_by: str, origin: str | None,
) -> str | None:  # fmt: skip
    """Why this job may not deliver to `target` (parsed from `target_text`), or None."""
    if target.kind == "log" or created_by == OWNER:
        return None
    fix = (
        f"only the owner can choose another target, at the CLI: "
        f"`herald cron edit {job_name} --deliver TARGET`"
    )
    who = "the model (the cronjob tool)" if created_by == MODEL else "an unknown creator"
    if target.kind == "file":
        assert target.path is not None
        if confined_relative(target.path, home) is None:
            return (
                f"job {job_name!r} was created by {who}, so it may write files only under "
                f"{output_dir(home)}/ (not {target.path}); {fix}"
            )
        try:
            real = Path(os.path.realpath(target.path))
        except (OSError, ValueError) as exc:  # a NUL byte, a loop of links
            return f"job {job_name!r}: cannot use {target.path} ({exc}); {fix}"
        if not real.is_relative_to(Path(os.path.realpath(output_dir(home)))):
            return (
                f"job {job_name!r} was created by {who}, and {target.path} leads out of "
                f"{output_dir(home)}/ through a symlink (to {real}); remove the link, or {fix}"
            )
        return None
    if origin and _same_chat(target, origin):
        return None
    where = f"the chat it was created from ({origin})" if origin else "no chat (it has no origin)"
    return (
        f"job {job_name!r} was created by {who}, so it may deliver only to the log, to files "
        f"under {output_dir(home)}/ or to {where}, not to {target_text}; {fix}"
    )


def _same_chat(target: DeliveryTarget, origin: str) -> bool:
    parts = origin.split(":")
    return len(parts) >= 2 and (target.platform, target.chat_id) == (parts[0], parts[1])


def open_confined(home: HeraldHome, rel: Path) -> int:
    """An append-only descriptor of ``cron/output/<rel>``, made without following any
    symlink (each directory is opened with O_NOFOLLOW relative to the one before) and
    refusing a file with other hard links. Raises OSError with the reason."""
    base = output_dir(home)
    base.mkdir(parents=True, exist_ok=True)
    flags_dir = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fd = os.open(base, flags_dir)
    try:
        for part in rel.parts[:-1]:
            try:
                os.mkdir(part, 0o700, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                nxt = os.open(part, flags_dir, dir_fd=fd)
            except OSError as exc:
                raise OSError(
                    exc.errno, f"{part!r} in {base} is a symlink or not a folder"
                ) from exc
            os.close(fd)
            fd = nxt
        try:
            out = os.open(
                rel.parts[-1],
                os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK,
                0o600,
                dir_fd=fd,
            )
        except OSError as exc:
            raise OSError(exc.errno, f"{base / rel} is a symlink or cannot be opened") from exc
    finally:
        os.close(fd)
    info = os.fstat(out)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        os.close(out)
        raise OSError(f"{base / rel} is not a plain file of its own (a link or a device)")
    return out


__all__ = [
    "CREATED_BY",
    "MODEL",
    "OWNER",
    "DeliveryTarget",
    "confined_relative",
    "delivery_refusal",
    "open_confined",
    "output_dir",
]
