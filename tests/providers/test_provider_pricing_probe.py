"""Cost estimates and the doctor's endpoint probe (against the fake server)."""

from __future__ import annotations

import pytest

from herald.providers.base import Usage
from herald.providers.pricing import estimate_cost, price_for
from herald.providers.probe import probe_endpoint
from herald.providers.selection import Endpoint


def test_cost_counts_cached_tokens_at_their_own_rates():
    usage = Usage(
        prompt_tokens=1_000_000,
        completion_tokens=100_000,
        cache_read_tokens=400_000,
        cache_write_tokens=100_000,
    )
    # claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million
    expected = 0.5 * 3.00 + 0.4 * 0.30 + 0.1 * 3.75 + 0.1 * 15.00
    assert estimate_cost("anthropic", "claude-sonnet-4-5-20250929", usage) == pytest.approx(
        expected
    )


def test_longest_prefix_wins_and_openrouter_names_resolve():
    assert price_for("openai", "gpt-4.1-mini-2025-04-14") == price_for("openai", "gpt-4.1-mini")
    assert price_for("openai", "gpt-4.1-mini") != price_for("openai", "gpt-4.1")
    assert price_for("openrouter", "openai/gpt-4o-mini") == price_for("openai", "gpt-4o-mini")
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)
    assert estimate_cost("openai", "gpt-4.1-mini", usage) == pytest.approx(0.40 + 1.60)


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("custom", "gpt-4o"),
        ("openai", "my-finetune"),
        ("anthropic", ""),
    ],
)
def test_unknown_models_have_no_price(provider, model):
    assert estimate_cost(provider, model, Usage(10, 10)) is None


def test_local_models_are_free_and_config_prices_win():
    from herald.config import HeraldConfig

    assert estimate_cost("local", "smollm2-135m-instruct", Usage(10, 10)) == 0.0
    config = HeraldConfig.model_validate(
        {"model": {"provider": "custom", "name": "mine", "pricing": {"input_per_mtok": 2,
                   "output_per_mtok": 4, "cache_read_per_mtok": 0.5}}}
    )  # fmt: skip
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000, cache_read_tokens=500_000)
    assert estimate_cost("custom", "mine", usage, config) == pytest.approx(1.0 + 0.25 + 4.0)
    assert estimate_cost("custom", "other", usage, config) is None


def _endpoint(server, api: str, model: str = "fake-model") -> Endpoint:
    if api == "openai":
        return Endpoint(
            "openai", "chat_completions", model, server.openai_base_url, "OPENAI_API_KEY"
        )
    return Endpoint(
        "anthropic", "anthropic_messages", model, server.anthropic_base_url, "ANTHROPIC_API_KEY"
    )


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_probe_lists_models_with_one_request(server, api):
    result = probe_endpoint(_endpoint(server, api), "sk-probe-key-0000", timeout=5)
    assert result.ok, result.detail
    assert "fake-model available" in result.detail
    assert "sk-probe-key-0000" not in result.detail
    assert len(server.requests) == 1
    recorded = server.requests[0]
    assert recorded.method == "GET" and recorded.path.endswith("/models")
    if api == "anthropic":
        assert recorded.headers["x-api-key"] == "sk-probe-key-0000"
        assert "anthropic-version" in recorded.headers
    else:
        assert recorded.headers["authorization"] == "Bearer sk-probe-key-0000"


def test_probe_notes_an_unlisted_model(server):
    result = probe_endpoint(_endpoint(server, "openai", "not-served"), "k", timeout=5)
    assert result.ok and "not-served is not listed" in result.detail


def test_probe_reports_unreachable_and_missing_key():
    dead = Endpoint(
        "custom", "chat_completions", "m", "http://127.0.0.1:9/v1", None, key_required=False
    )
    result = probe_endpoint(dead, None, timeout=2)
    assert not result.ok and "cannot connect" in result.detail
    keyed = Endpoint("openai", "chat_completions", "m", "http://127.0.0.1:9/v1", "OPENAI_API_KEY")
    result = probe_endpoint(keyed, None)
    assert not result.ok and "OPENAI_API_KEY" in result.detail


def test_probe_local_needs_no_network(tmp_path):
    local = Endpoint("local", "local", "smollm2-135m-instruct", None, None, key_required=False)
    assert probe_endpoint(local, None).ok
    missing = Endpoint(
        "local",
        "local",
        "x",
        None,
        None,
        key_required=False,
        local_path=str(tmp_path / "nope.gguf"),
    )
    result = probe_endpoint(missing, None)
    assert not result.ok and "not found" in result.detail


def test_probe_reports_http_errors(server):
    wrong = Endpoint(
        "custom", "chat_completions", "m", server.url + "/wrong", None, key_required=False
    )
    result = probe_endpoint(wrong, None, timeout=5)
    assert not result.ok
    assert "HTTP 404" in result.detail
