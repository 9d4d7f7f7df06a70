"""Matrix, through mautrix: the sync loop, rooms, DMs and threads (``adapter``), room
events as messages (``events``), end-to-end encryption and the gate that keeps
plaintext out of encrypted rooms (``crypto``), files in and out (``media``), what is
kept under the home (``stores``) and the login settings (``config``). It is tested
against a real Synapse (`herald.testing.synapse`).

`create_adapter` loads mautrix (and the Olm bindings) on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets, Settings
    from herald.config.schema_matrix import MatrixPlatformConfig
    from herald.gateway.platforms.matrix.adapter import MatrixAdapter


def create_adapter(
    config: HeraldConfig | MatrixPlatformConfig,
    secrets: Secrets,
    *,
    settings: Settings | None = None,
    home: HeraldHome | None = None,
) -> MatrixAdapter:
    """The Matrix adapter from `gateway.platforms.matrix` (the whole config or that
    section); `settings` supplies the watchdog's slack and the workdir, `home` the
    folder its stores live in."""
    from herald.config.schema_matrix import MatrixPlatformConfig
    from herald.gateway.platforms.matrix.adapter import MatrixAdapter
    from herald.gateway.platforms.matrix.config import resolve_secrets

    section = config.gateway.platforms.matrix if hasattr(config, "gateway") else config
    if not isinstance(section, MatrixPlatformConfig):
        raise TypeError(f"expected HeraldConfig or MatrixPlatformConfig, not {type(config)}")
    home = home or (settings.home if settings is not None else None)
    if section.store_dir:
        store_dir = Path(section.store_dir).expanduser()
    elif home is not None:
        store_dir = Path(home.root) / "matrix"
    else:
        raise ValueError("the Matrix adapter needs Herald's home (or store_dir) for its stores")
    attachments_dir = None
    if section.download_attachments and settings is not None:
        attachments_dir = Path(settings.config.gateway.cwd or Path.cwd()) / "attachments"
    return MatrixAdapter(
        section,
        resolve_secrets(section, secrets),
        store_dir=store_dir,
        attachments_dir=attachments_dir,
        silence_slack=settings.config.gateway.watchdog.slack_seconds if settings else 15.0,
    )


def __getattr__(name: str) -> Any:
    if name not in {"MatrixAdapter", "MatrixConnectError"}:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.adapter"), name)


__all__ = ["MatrixAdapter", "MatrixConnectError", "create_adapter"]
