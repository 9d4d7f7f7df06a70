"""The shape of ``config.yaml``: every key, its type and its default, in one place.

Unknown keys are errors (a typo must not be silently ignored). Later layers add
their own sections here rather than reading raw dictionaries.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from herald.config.schema_backup import BackupConfig
from herald.config.schema_browser import BrowserConfig
from herald.config.schema_budget import BudgetConfig, ModelPricing
from herald.config.schema_checkpoints import CheckpointsConfig
from herald.config.schema_context import ContextConfig
from herald.config.schema_cron import CronConfig
from herald.config.schema_delegation import DelegationConfig
from herald.config.schema_execute_code import ExecuteCodeConfig
from herald.config.schema_gateway import GatewayConfig
from herald.config.schema_identities import IdentityConfig, check_identities
from herald.config.schema_kanban import KanbanConfig
from herald.config.schema_learning import LearningConfig
from herald.config.schema_mcp import McpConfig
from herald.config.schema_memory import MemoryConfig
from herald.config.schema_plugins import PluginsConfig
from herald.config.schema_skills import CuratorConfig, SkillsConfig
from herald.config.schema_terminal import TerminalConfig
from herald.config.schema_tools import GuardrailsConfig, ToolsetsConfig
from herald.config.schema_trust import TrustConfig
from herald.config.schema_vision import VisionConfig
from herald.config.schema_voice import VoiceConfig
from herald.config.schema_web import WebConfig
from herald.config.strict import StrictModel, renamed_key

# The format of config.yaml. Raise it (and add a step to herald.homes.upgrade) when a
# key changes meaning in a way renamed_key cannot express; an older Herald refuses a
# file with a higher number instead of misreading it.
CONFIG_VERSION = 1

ProviderName = Literal["openai", "anthropic", "openrouter", "custom", "local"]


class FallbackEntry(StrictModel):
    """One step of the fallback chain, tried in order when the main model fails."""

    provider: ProviderName
    name: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None


class ModelConfig(StrictModel):
    provider: ProviderName | None = Field(
        None, description="openai | anthropic | openrouter | custom | local; unset = auto-detect"
    )
    name: str | None = Field(None, description="model name; unset = the provider's default")
    base_url: str | None = Field(None, description="API base URL (required for custom)")
    api_key_env: str | None = Field(
        None, description="name of the secret holding the API key (default per provider)"
    )
    context_length: int | None = Field(None, gt=0, description="override the context window")
    max_tokens: int | None = Field(None, gt=0, description="cap on output tokens per call")
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float = Field(120.0, gt=0, description="seconds to wait for one model call")
    stream: bool = True
    transport: Literal["lean", "sdk"] = Field(
        "lean",
        description="lean = Herald's own HTTP client (fast start); sdk = the openai/anthropic SDKs",
    )
    fallbacks: list[FallbackEntry] = Field(default_factory=list)
    local_path: str | None = Field(None, description="GGUF file for the local provider")
    api_mode: str | None = Field(
        None,
        description="custom provider: the API shape, e.g. one a plugin's model provider adds; "
        "unset = chat_completions",
    )
    pricing: ModelPricing | None = Field(
        None, description="USD per million tokens for this model (overrides the built-in table)"
    )


class AuxiliaryConfig(StrictModel):
    """The side-job model (summaries, titles, smart approval). Unset keys inherit `model`."""

    provider: ProviderName | None = None
    name: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_tokens: int | None = Field(None, gt=0)
    timeout: float | None = Field(None, gt=0)
    pricing: ModelPricing | None = None


class AgentConfig(StrictModel):
    max_iterations: int = Field(90, ge=1, description="model calls allowed per turn")
    max_retries: int = Field(3, ge=0, description="retries of one model call")
    retry_base_delay: float = Field(1.0, ge=0)
    retry_max_delay: float = Field(30.0, ge=0)
    empty_response_retries: int = Field(2, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _renamed_max_turns(cls, data: Any) -> Any:
        return renamed_key(data, "max_turns", "max_iterations", "agent")


class CredentialsConfig(StrictModel):
    """Cool-downs (seconds) for a key that hit a limit, by error class."""

    rate_limit_cooldown: float = Field(60.0, ge=0)
    billing_cooldown: float = Field(3600.0, ge=0)
    auth_cooldown: float = Field(300.0, ge=0)


class DisplayConfig(StrictModel):
    stream: bool = True
    show_reasoning: bool = False


class ApprovalsConfig(StrictModel):
    """How dangerous commands are approved (see herald.safety.approval).

    Hard-line commands are refused whatever these say."""

    mode: Literal["manual", "smart", "off"] = Field(
        "manual",
        description="manual: ask a human; smart: an auxiliary model judges first and only "
        "unclear or unsafe commands reach a human; off: dangerous commands run unasked",
    )
    timeout_seconds: float = Field(
        120.0, gt=0, description="seconds to wait for a human answer; no answer is a denial"
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _yaml_off(cls, value: object) -> object:
        # YAML 1.1 reads a bare `off` as false; `mode: off` means "off".
        return "off" if value is False else value

    always_allow: list[str] = Field(
        default_factory=list,
        description="command patterns approved for good (glob; never match compound commands)",
    )
    deny: list[str] = Field(
        default_factory=list, description="command globs always refused; nothing overrides them"
    )
    unattended_default: Literal["deny", "allow"] = Field(
        "deny",
        description="deny: an unattended turn runs only known read-only commands and "
        "unattended_allow patterns; allow (DANGEROUS opt-out): it runs anything not "
        "hard-line or denied",
    )
    unattended: dict[str, Literal["deny", "allow"]] = Field(
        default_factory=dict,
        description="per-scenario override of unattended_default (keys such as cron, api, "
        "mcp, kanban, delegate)",
    )
    unattended_allow: list[str] = Field(
        default_factory=list,
        description="command patterns every unattended turn may run beyond the known "
        "read-only commands (glob; never match compound commands as a whole)",
    )
    sandboxed: Literal["relaxed", "strict"] = Field(
        "relaxed",
        description="inside a bwrap/docker sandbox, relaxed: commands that only endanger the "
        "sandbox run unasked; strict: the same prompts as on the host",
    )


class HeraldConfig(StrictModel):
    config_version: int = Field(
        CONFIG_VERSION, ge=1, description="the format of this file (written by Herald)"
    )
    model: ModelConfig = Field(default_factory=ModelConfig)
    auxiliary: AuxiliaryConfig = Field(default_factory=AuxiliaryConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    credentials: CredentialsConfig = Field(default_factory=CredentialsConfig)
    display: DisplayConfig = Field(default_factory=DisplayConfig)
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    toolsets: ToolsetsConfig = Field(default_factory=ToolsetsConfig)
    guardrails: GuardrailsConfig = Field(default_factory=GuardrailsConfig)
    terminal: TerminalConfig = Field(default_factory=TerminalConfig)
    web: WebConfig = Field(default_factory=WebConfig)
    execute_code: ExecuteCodeConfig = Field(default_factory=ExecuteCodeConfig)
    browser: BrowserConfig = Field(default_factory=BrowserConfig)
    vision: VisionConfig = Field(default_factory=VisionConfig)
    voice: VoiceConfig = Field(default_factory=VoiceConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    curator: CuratorConfig = Field(default_factory=CuratorConfig)
    learning: LearningConfig = Field(default_factory=LearningConfig)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    kanban: KanbanConfig = Field(default_factory=KanbanConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    cron: CronConfig = Field(default_factory=CronConfig)
    delegation: DelegationConfig = Field(default_factory=DelegationConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    trust: TrustConfig = Field(default_factory=TrustConfig)
    backup: BackupConfig = Field(default_factory=BackupConfig)
    identities: dict[str, IdentityConfig] = Field(
        default_factory=dict, description="who shares this Herald: role and accounts"
    )

    @field_validator("config_version")
    @classmethod
    def _not_newer(cls, value: int) -> int:
        if value > CONFIG_VERSION:
            raise ValueError(
                f"a config_version this Herald knows (up to {CONFIG_VERSION}): the file was "
                "written by a newer Herald; upgrade Herald to use this home (nothing was changed)"
            )
        return value

    @field_validator("identities")
    @classmethod
    def _identities(cls, value: dict[str, IdentityConfig]) -> dict[str, IdentityConfig]:
        return check_identities(value)

    def fingerprint(self) -> str:
        """A short stable hash of the effective config (for caches keyed on it)."""
        import hashlib

        data = self.model_dump_json(exclude_none=False).encode()
        return hashlib.sha256(data).hexdigest()[:16]
