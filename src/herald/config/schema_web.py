"""Config section for the web tools (`web_search`, `web_extract`).

`search_backend: auto` picks Brave when its API key is in the secrets, else
SearXNG when `searxng_url` is set, else `web_search` is unavailable and never
offered to the model. Keys live in `.env`; only their names are configured here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from herald.config.strict import StrictModel

BRAVE_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search"


class WebConfig(StrictModel):
    search_backend: Literal["auto", "brave", "searxng"] = Field(
        "auto",
        description="auto: brave if its key is set, else searxng if searxng_url is set",
    )
    searxng_url: str | None = Field(
        None, description="base URL of a SearXNG instance with the json format enabled"
    )
    brave_api_key_env: str = Field(
        "BRAVE_API_KEY", description="name of the secret holding the Brave Search API key"
    )
    brave_url: str = Field(BRAVE_SEARCH_URL, description="Brave Search API endpoint")
    max_results: int = Field(8, ge=1, le=20, description="search hits returned per query")
    timeout: float = Field(20.0, gt=0, description="seconds per web request")
    max_redirects: int = Field(5, ge=0, le=20, description="redirects web_extract follows")
    extract_max_bytes: int = Field(
        3_000_000, ge=1024, description="bytes of a page web_extract downloads at most"
    )
    extract_max_chars: int = Field(
        40_000, ge=1000, description="characters of page text web_extract returns at most"
    )
    allow_private_networks: bool = Field(
        False,
        description="let web_extract fetch loopback, private and link-local addresses",
    )
    user_agent: str = Field(
        "Mozilla/5.0 (compatible; Herald personal agent)",
        description="User-Agent header of web requests",
    )
