"""Rough cost of a call in USD, from a small built-in price table.

Prices are USD per million tokens: (input, output, cache read, cache write).
The longest matching model-name prefix wins, so ``gpt-4.1-mini-2025-04-14``
finds ``gpt-4.1-mini`` and not ``gpt-4.1``. Unknown models and custom servers
give None (a wrong number is worse than none) unless config prices them
(`model.pricing`, `auxiliary.pricing`); the local provider costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from herald.providers.base import Usage

if TYPE_CHECKING:
    from herald.config import HeraldConfig, ModelPricing


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_read: float
    cache_write: float


# OpenAI bills cache writes as ordinary input; Anthropic's 5-minute cache write
# costs 1.25x input and a read 0.1x.
PRICES: dict[str, Price] = {
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025, 0.10),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10, 0.40),
    "gpt-4.1": Price(2.00, 8.00, 0.50, 2.00),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075, 0.15),
    "gpt-4o": Price(2.50, 10.00, 1.25, 2.50),
    "gpt-5-nano": Price(0.05, 0.40, 0.005, 0.05),
    "gpt-5-mini": Price(0.25, 2.00, 0.025, 0.25),
    "gpt-5": Price(1.25, 10.00, 0.125, 1.25),
    "o4-mini": Price(1.10, 4.40, 0.275, 1.10),
    "o3-mini": Price(1.10, 4.40, 0.55, 1.10),
    "o3": Price(2.00, 8.00, 0.50, 2.00),
    "claude-opus-4-5": Price(5.00, 25.00, 0.50, 6.25),
    "claude-opus-4": Price(15.00, 75.00, 1.50, 18.75),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30, 3.75),
    "claude-3-7-sonnet": Price(3.00, 15.00, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10, 1.25),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08, 1.00),
}

PRICED_PROVIDERS = frozenset({"openai", "anthropic", "openrouter"})


FREE = Price(0.0, 0.0, 0.0, 0.0)


def price_from_config(pricing: ModelPricing) -> Price:
    read = pricing.cache_read_per_mtok
    write = pricing.cache_write_per_mtok
    return Price(
        pricing.input_per_mtok,
        pricing.output_per_mtok,
        pricing.input_per_mtok if read is None else read,
        pricing.input_per_mtok if write is None else write,
    )


def configured_price(config: HeraldConfig | None, provider: str, model: str) -> Price | None:
    """The price config gives this model: `model.pricing` for the main model's name (and
    its fallbacks, which share the setting only when named alike), `auxiliary.pricing`
    for the auxiliary model's."""
    if config is None:
        return None
    for section in (config.model, config.auxiliary):
        if section.pricing is not None and section.name and section.name == model:
            return price_from_config(section.pricing)
    if config.model.pricing is not None and not config.model.name:
        return price_from_config(config.model.pricing)  # the provider's default model
    return None


def price_for(provider: str, model: str, config: HeraldConfig | None = None) -> Price | None:
    override = configured_price(config, provider, model)
    if override is not None:
        return override
    if provider == "local":
        return FREE
    if provider not in PRICED_PROVIDERS or not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]  # openrouter: "openai/gpt-4.1-mini"
    best: str | None = None
    for prefix in PRICES:
        if name.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return PRICES[best] if best else None


def estimate_cost(
    provider: str, model: str, usage: Usage, config: HeraldConfig | None = None
) -> float | None:
    """USD for one call's `usage` (whose prompt_tokens include cached tokens)."""
    price = price_for(provider, model, config)
    if price is None:
        return None
    uncached = max(0, usage.prompt_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    total = (
        uncached * price.input
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
        + usage.completion_tokens * price.output
    )
    return total / 1_000_000
