"""Notices said once per home: a marker file per notice under ``<home>/cache/notices/``.

Creating the marker with ``O_CREAT | O_EXCL`` is atomic, so two processes starting at
once (a one-shot and the gateway) still say a notice once, with no lock. A home that
cannot be written says it every time, which is the safe side of the trade.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def first_time(cache_dir: Path, key: str) -> bool:
    """True the first time `key` is asked about in this home, False afterwards."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    directory = cache_dir / "notices"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / digest, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return False
    except OSError:
        return True
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(key + "\n")
    return True


__all__ = ["first_time"]
