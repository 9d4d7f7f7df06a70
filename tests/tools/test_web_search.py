"""web_search against fake SearXNG and Brave servers on 127.0.0.1; backend choice and
availability."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from test_web_support import LocalHTTPServer

from herald.config import HeraldConfig, Secrets
from herald.config.schema_web import WebConfig
from herald.tools.registry import ERROR_PREFIX, ToolContext, ToolRegistry
from herald.tools.web import BraveBackend, SearxngBackend, choose_backend, web_search_available
from herald.tools.web import register as register_web

BRAVE_KEY = "brave-test-key-123456"
BRAVE_PATH = "/res/v1/web/search"

SEARXNG_RESULTS = {
    "query": "herald agent",
    "results": [
        {
            "title": "Herald docs",
            "url": "https://herald.example/docs",
            "content": "The agent &amp; its tools",
        },
        {"title": "Second", "url": "https://two.example/", "content": "more"},
        {"title": "No URL", "content": "skipped"},
        {"title": "Third", "url": "https://three.example/", "content": "x"},
    ],
}
BRAVE_RESULTS = {
    "type": "search",
    "web": {
        "results": [
            {
                "title": "Brave <strong>Herald</strong>",
                "url": "https://brave.example/herald",
                "description": "A <strong>personal</strong> agent &#39;here&#39;",
            }
        ]
    },
}


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/search", body=json.dumps(SEARXNG_RESULTS), content_type="application/json")
        srv.route(BRAVE_PATH, body=json.dumps(BRAVE_RESULTS), content_type="application/json")
        yield srv


@pytest.fixture
def reg() -> ToolRegistry:
    r = ToolRegistry()
    register_web(r)
    return r


def make_ctx(web: dict[str, Any], secrets: dict[str, str] | None = None) -> ToolContext:
    return ToolContext(
        config=HeraldConfig(web=WebConfig(**web)),
        secrets=Secrets(environ=secrets or {}),
    )


def search(reg: ToolRegistry, ctx: ToolContext, query: str = "herald agent"):
    return reg.dispatch("web_search", json.dumps({"query": query}), ctx)


def test_searxng_hits_are_parsed(reg, server):
    ctx = make_ctx({"searxng_url": server.url + "/", "max_results": 2})
    result = search(reg, ctx)
    assert not result.is_error, result.content
    data = json.loads(result.content)
    assert data["results"] == [
        {
            "title": "Herald docs",
            "url": "https://herald.example/docs",
            "snippet": "The agent & its tools",
        },
        {"title": "Second", "url": "https://two.example/", "snippet": "more"},
    ]
    assert "untrusted" in data["note"]
    request = server.requests[-1]
    assert request.path == "/search"
    assert request.query == {"q": ["herald agent"], "format": ["json"]}


def test_brave_sends_the_key_as_header_and_cleans_snippets(reg, server):
    ctx = make_ctx({"brave_url": server.url + BRAVE_PATH}, {"BRAVE_API_KEY": BRAVE_KEY})
    result = search(reg, ctx, "  personal   agent ")
    data = json.loads(result.content)
    assert data["query"] == "personal agent"
    assert data["results"] == [
        {
            "title": "Brave Herald",
            "url": "https://brave.example/herald",
            "snippet": "A personal agent 'here'",
        }
    ]
    request = server.requests[-1]
    assert request.path == BRAVE_PATH
    assert request.headers["x-subscription-token"] == BRAVE_KEY
    assert request.query["q"] == ["personal agent"] and request.query["count"] == ["8"]


def test_auto_prefers_brave_and_explicit_choice_wins(server):
    both = {"searxng_url": server.url, "brave_url": server.url + BRAVE_PATH}
    keys = {"BRAVE_API_KEY": BRAVE_KEY}
    auto = choose_backend(WebConfig(**both), Secrets(environ=keys))
    assert isinstance(auto.backend, BraveBackend) and "BRAVE_API_KEY" in auto.reason
    forced = choose_backend(WebConfig(search_backend="searxng", **both), Secrets(environ=keys))
    assert isinstance(forced.backend, SearxngBackend)
    assert isinstance(
        choose_backend(WebConfig(**both), Secrets(environ={})).backend, SearxngBackend
    )
    assert BRAVE_KEY not in repr(auto.backend)


def test_custom_key_secret_name(server):
    config = WebConfig(brave_api_key_env="MY_BRAVE_TOKEN", brave_url=server.url + BRAVE_PATH)
    choice = choose_backend(config, Secrets(environ={"MY_BRAVE_TOKEN": BRAVE_KEY}))
    assert isinstance(choice.backend, BraveBackend)
    choice.backend.search("q", max_results=3)
    assert server.requests[-1].headers["x-subscription-token"] == BRAVE_KEY


@pytest.mark.parametrize(
    ("web", "reason"),
    [
        ({}, "set the secret BRAVE_API_KEY or web.searxng_url"),
        ({"search_backend": "brave", "searxng_url": "http://x"}, "BRAVE_API_KEY is not set"),
        ({"search_backend": "searxng"}, "web.searxng_url is not set"),
    ],
)
def test_missing_key_or_url_means_not_available(reg, web, reason):
    ctx = make_ctx(web)
    choice = choose_backend(ctx.config.web, ctx.secrets)
    assert choice.backend is None and reason in choice.reason
    assert web_search_available(ctx) is False
    result = search(reg, ctx)
    assert result.is_error and "not available" in result.content and reason in result.content


def test_registered_with_an_availability_check(reg):
    spec = reg.get("web_search")
    assert spec is not None and spec.check_fn is web_search_available
    assert spec.parallel_safe and spec.toolset == "web"


def test_availability_follows_each_profiles_own_config(reg):
    """The registry hands check_fn the agent's config and secrets: one profile with a
    search backend and one without get different answers in the same process."""
    from herald.config import HeraldConfig, Secrets
    from herald.tools import available_tool_names

    with_searx = HeraldConfig.model_validate({"web": {"searxng_url": "http://127.0.0.1:9"}})
    without = HeraldConfig()
    empty = Secrets(environ={})
    assert "web_search" in available_tool_names("web", with_searx, reg, secrets=empty)
    assert "web_search" not in available_tool_names("web", without, reg, secrets=empty)
    brave = Secrets(environ={"BRAVE_API_KEY": BRAVE_KEY})
    assert "web_search" in available_tool_names("web", without, reg, secrets=brave)


def test_backend_errors_are_clear(reg, server):
    server.route("/search", status=403, body="forbidden")
    message = search(reg, make_ctx({"searxng_url": server.url})).content
    assert message.startswith(ERROR_PREFIX) and "json format" in message

    server.route(BRAVE_PATH, status=401, body='{"error": "bad key"}')
    ctx = make_ctx({"brave_url": server.url + BRAVE_PATH}, {"BRAVE_API_KEY": BRAVE_KEY})
    message = search(reg, ctx).content
    assert "rejected" in message and "API key" in message and BRAVE_KEY not in message

    server.route(BRAVE_PATH, status=429, body="slow down")
    assert "rate limit" in search(reg, ctx).content

    server.route("/search", body="<html>not json</html>", content_type="text/html")
    assert "did not return JSON" in search(reg, make_ctx({"searxng_url": server.url})).content


def test_unreachable_backend(reg):
    # Port 9 (discard) on loopback: nothing listens there.
    message = search(reg, make_ctx({"searxng_url": "http://127.0.0.1:9", "timeout": 5})).content
    assert message.startswith(ERROR_PREFIX) and "could not reach SearXNG" in message


def test_empty_results_and_bad_query(reg, server):
    server.route("/search", body=json.dumps({"results": []}), content_type="application/json")
    data = json.loads(search(reg, make_ctx({"searxng_url": server.url})).content)
    assert data["results"] == [] and "no results" in data["note"]
    assert search(reg, make_ctx({"searxng_url": server.url}), "  ").is_error


def test_secret_values_in_snippets_are_masked(reg, server):
    leaked = {
        "results": [{"title": "t", "url": "https://x.example/", "content": f"key {BRAVE_KEY}"}]
    }
    server.route("/search", body=json.dumps(leaked), content_type="application/json")
    ctx = make_ctx({"searxng_url": server.url}, {"BRAVE_API_KEY": BRAVE_KEY})
    ctx.config.web.search_backend = "searxng"
    out = search(reg, ctx).content
    assert BRAVE_KEY not in out and "[REDACTED]" in out


def test_schema_comes_from_the_signature(reg):
    params = reg.get("web_search").definition()["function"]["parameters"]
    assert params["required"] == ["query"] and params["properties"]["query"]["type"] == "string"
    assert set(params["properties"]) == {"query"}


def test_bad_arguments_get_clear_errors(reg, server):
    ctx = make_ctx({"searxng_url": server.url})

    def error(args: dict[str, Any]) -> str:
        result = reg.dispatch("web_search", args, ctx)
        assert result.is_error and result.content.startswith(ERROR_PREFIX)
        return result.content

    assert "query is required" in error({})
    assert "query must be a string, got 5" in error({"query": 5})
    assert "'count' is not an argument of web_search" in error({"query": "x", "count": 3})
    assert "query must be a non-empty string" in error({"query": " \n "})
    assert "query is too long (max 400 characters)" in error({"query": "word " * 100})
    assert not server.requests  # nothing reached the backend
