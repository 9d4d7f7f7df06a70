"""Configuration, home layout, profiles and the secrets accessor (L0).

`load_settings()` is the one entry point surfaces use: it resolves the home
(profile aware), validates ``config.yaml`` and loads ``.env`` secrets.
`require_entrance()` is the one rule every served entrance's secret must pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from herald.config.home import (
    HeraldHome,
    ProfileNameError,
    base_home,
    resolve_home,
    validate_profile_name,
)
from herald.config.loader import (
    ConfigError,
    load_config,
    parse_value,
    read_raw,
    set_value,
    update_raw,
    validate,
    write_raw,
)
from herald.config.notices import first_time
from herald.config.schema import (
    AgentConfig,
    AuxiliaryConfig,
    FallbackEntry,
    HeraldConfig,
    ModelConfig,
    ProviderName,
)
from herald.config.schema_budget import BudgetConfig, ModelPricing, SourceBudget
from herald.config.schema_checkpoints import CheckpointsConfig
from herald.config.schema_trust import TrustConfig
from herald.config.secrets import (
    ENV_NAME_RE,
    MissingSecretError,
    Secrets,
    env_file_names,
    resolve_secret_ref,
    write_env_value,
)
from herald.config.shared_file import (
    SharedFileConflict,
    SharedFileLockTimeout,
    update_shared_file,
)
from herald.lazy import lazy_exports

if TYPE_CHECKING:  # loaded on first use: only the served entrances check secrets' strength
    from herald.config.secret_strength import (
        ENTRANCE_SECRETS,
        WEB_LOGIN,
        EntranceSecret,
        WeakSecretError,
        check_entrance,
        entrance_env_name,
        entrance_label,
        entrance_secret_problem,
        fix_hint,
        is_loopback,
        require_entrance,
        secret_problem,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.config.secret_strength": (
        "ENTRANCE_SECRETS",
        "WEB_LOGIN",
        "EntranceSecret",
        "WeakSecretError",
        "check_entrance",
        "entrance_env_name",
        "entrance_label",
        "entrance_secret_problem",
        "fix_hint",
        "is_loopback",
        "require_entrance",
        "secret_problem",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


@dataclass
class Settings:
    """Everything read from a home at start-up."""

    home: HeraldHome
    config: HeraldConfig
    secrets: Secrets


def with_turn_cap(settings: Settings, usd: float) -> Settings:
    """`settings` whose `budget.turn_usd` is at most `usd` (for one unattended run with
    its own spending limit: an MCP `agent_run`, a kanban worker)."""
    import dataclasses

    config = settings.config.model_copy(deep=True)
    current = config.budget.turn_usd
    config.budget.turn_usd = usd if current is None else min(current, usd)
    return dataclasses.replace(settings, config=config)


def load_settings(profile: str | None = None) -> Settings:
    home = resolve_home(profile)
    config = load_config(home.config_path)
    return Settings(home=home, config=config, secrets=Secrets(home.env_path))


__all__ = [
    "ENTRANCE_SECRETS",
    "ENV_NAME_RE",
    "WEB_LOGIN",
    "AgentConfig",
    "AuxiliaryConfig",
    "BudgetConfig",
    "CheckpointsConfig",
    "ConfigError",
    "EntranceSecret",
    "FallbackEntry",
    "HeraldConfig",
    "HeraldHome",
    "MissingSecretError",
    "ModelConfig",
    "ModelPricing",
    "ProfileNameError",
    "ProviderName",
    "Secrets",
    "Settings",
    "SharedFileConflict",
    "SharedFileLockTimeout",
    "SourceBudget",
    "TrustConfig",
    "WeakSecretError",
    "base_home",
    "check_entrance",
    "entrance_env_name",
    "entrance_label",
    "entrance_secret_problem",
    "env_file_names",
    "first_time",
    "fix_hint",
    "is_loopback",
    "load_config",
    "load_settings",
    "parse_value",
    "read_raw",
    "require_entrance",
    "resolve_home",
    "resolve_secret_ref",
    "secret_problem",
    "set_value",
    "update_raw",
    "update_shared_file",
    "validate",
    "validate_profile_name",
    "with_turn_cap",
    "write_env_value",
    "write_raw",
]
