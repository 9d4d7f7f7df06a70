"""Config sections `budget` (spend caps checked before every model call) and the per-model
`pricing` override that prices custom and local endpoints."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class ModelPricing(StrictModel):
    """USD per million tokens for one model; overrides the built-in table (local = 0)."""

    input_per_mtok: float = Field(0.0, ge=0)
    output_per_mtok: float = Field(0.0, ge=0)
    cache_read_per_mtok: float | None = Field(None, ge=0, description="unset = input price")
    cache_write_per_mtok: float | None = Field(None, ge=0, description="unset = input price")


class SourceBudget(StrictModel):
    """Caps for one surface (telegram, api, cron, ...), counted over its sessions."""

    daily_usd: float | None = Field(None, ge=0)
    daily_tokens: int | None = Field(None, ge=0)
    monthly_usd: float | None = Field(None, ge=0)
    monthly_tokens: int | None = Field(None, ge=0)


class BudgetConfig(StrictModel):
    """Spend caps, each optional. A model call whose estimated cost would pass one is not
    made: the turn ends with `spend_limit_reached` and says which cap to raise. Tokens are
    prompt plus completion tokens (for models without prices). Days and months are local
    time; a session counts its sub-agents and background reviews."""

    daily_usd: float | None = Field(None, ge=0)
    monthly_usd: float | None = Field(None, ge=0)
    session_usd: float | None = Field(None, ge=0)
    turn_usd: float | None = Field(None, ge=0)
    daily_tokens: int | None = Field(None, ge=0)
    monthly_tokens: int | None = Field(None, ge=0)
    session_tokens: int | None = Field(None, ge=0)
    turn_tokens: int | None = Field(None, ge=0)
    per_source: dict[str, SourceBudget] = Field(default_factory=dict)
    warn_at: list[float] = Field(
        default_factory=lambda: [0.5, 0.75, 0.9],
        description="fractions of a cap at which to warn, once each per period",
    )
    output_estimate_tokens: int = Field(
        1024,
        ge=0,
        description="completion tokens a call is assumed to use before it is made "
        "(model.max_tokens wins when it is smaller)",
    )

    def any_cap(self) -> bool:
        fields = (
            self.daily_usd,
            self.monthly_usd,
            self.session_usd,
            self.turn_usd,
            self.daily_tokens,
            self.monthly_tokens,
            self.session_tokens,
            self.turn_tokens,
        )
        return any(v is not None for v in fields) or bool(self.per_source)
