"""Configuration, home layout, profiles and the secrets accessor (L0).

`load_settings()` is the one entry point surfaces use: it resolves the home
(profile aware), validates ``config.yaml`` and loads ``.env`` secrets.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from herald.config.schema import (
    AgentConfig,
    AuxiliaryConfig,
    FallbackEntry,
    HeraldConfig,
    ModelConfig,
    ProviderName,
)
from herald.config.schema_budget import BudgetConfig, ModelPricing, SourceBudget
from herald.config.secrets import MissingSecretError, Secrets
from herald.config.shared_file import (
    SharedFileConflict,
    SharedFileLockTimeout,
    update_shared_file,
)


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
    "AgentConfig",
    "AuxiliaryConfig",
    "BudgetConfig",
    "ConfigError",
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
    "base_home",
    "load_config",
    "load_settings",
    "parse_value",
    "read_raw",
    "resolve_home",
    "set_value",
    "update_raw",
    "update_shared_file",
    "validate",
    "validate_profile_name",
    "with_turn_cap",
    "write_raw",
]
