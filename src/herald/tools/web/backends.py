"""Search backends behind `web_search`: a small protocol and two implementations.

- `SearxngBackend`: any SearXNG-compatible instance (``GET {base}/search?q=…&format=json``);
  self-hosted, no key.
- `BraveBackend`: the Brave Search API (key in the `X-Subscription-Token` header).

`choose_backend` turns config + secrets into a backend, or None with the reason.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from herald.tools.web.common import web_config

if TYPE_CHECKING:
    import httpx

    from herald.config import Secrets
    from herald.config.schema_web import WebConfig
    from herald.tools.registry import ToolContext

_TAG_RE = re.compile(r"<[^>]{0,200}>")
_SPACE_RE = re.compile(r"\s+")
MAX_SNIPPET_CHARS = 500


class WebSearchError(RuntimeError):
    """A search that failed; the message says why and what to do."""


@dataclass(frozen=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    name: str

    def search(self, query: str, *, max_results: int) -> list[SearchHit]: ...


def clean_snippet(text: Any, limit: int = MAX_SNIPPET_CHARS) -> str:
    """Plain text from an API's snippet (which may carry <strong> tags and entities)."""
    if not isinstance(text, str):
        return ""
    text = _SPACE_RE.sub(" ", html.unescape(_TAG_RE.sub("", text))).strip()
    return text if len(text) <= limit else text[:limit] + "…"


def _hits(items: Any, snippet_key: str, max_results: int) -> list[SearchHit]:
    hits: list[SearchHit] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        url = item.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            continue
        title = clean_snippet(item.get("title"), 200) or url
        hits.append(SearchHit(title, url, clean_snippet(item.get(snippet_key))))
        if len(hits) == max_results:
            break
    return hits


def _get_json(
    service: str, url: str, *, params: dict[str, Any], headers: dict[str, str], timeout: float
) -> Any:
    import httpx

    try:
        with httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=True) as client:
            response = client.get(url, params=params, headers=headers)
    except httpx.TimeoutException:
        raise WebSearchError(f"{service} did not answer within {timeout:.0f}s; try again") from None
    except httpx.HTTPError as exc:
        raise WebSearchError(f"could not reach {service}: {type(exc).__name__}: {exc}") from None
    _raise_for_status(service, response)
    try:
        return response.json()
    except ValueError:
        raise WebSearchError(
            f"{service} did not return JSON (content-type "
            f"{response.headers.get('content-type', 'unknown')!r})"
        ) from None


def _raise_for_status(service: str, response: httpx.Response) -> None:
    status = response.status_code
    if status < 400:
        return
    if status == 429:
        raise WebSearchError(
            f"{service} rate limit reached (HTTP 429); wait before searching again"
        )
    if service == "Brave Search" and status in (401, 403, 422):
        raise WebSearchError(
            f"Brave Search rejected the request (HTTP {status}): check the API key "
            "secret (web.brave_api_key_env, default BRAVE_API_KEY)"
        )
    if service == "SearXNG" and status == 403:
        raise WebSearchError(
            "SearXNG refused the request (HTTP 403): enable the json format in the "
            "instance's settings.yml (search.formats: [html, json])"
        )
    raise WebSearchError(f"{service} returned HTTP {status} {response.reason_phrase}".rstrip())


class SearxngBackend:
    name = "searxng"

    def __init__(self, base_url: str, *, timeout: float = 20.0, user_agent: str = "Herald") -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.user_agent = user_agent

    def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        data = _get_json(
            "SearXNG",
            f"{self.base_url}/search",
            params={"q": query, "format": "json"},
            headers={"Accept": "application/json", "User-Agent": self.user_agent},
            timeout=self.timeout,
        )
        results = data.get("results") if isinstance(data, dict) else None
        return _hits(results, "content", max_results)


class BraveBackend:
    name = "brave"

    def __init__(
        self, api_key: str, *, url: str, timeout: float = 20.0, user_agent: str = "Herald"
    ) -> None:
        self._api_key = api_key
        self.url = url
        self.timeout = timeout
        self.user_agent = user_agent

    def __repr__(self) -> str:  # never show the key
        return f"BraveBackend(url={self.url!r})"

    def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        data = _get_json(
            "Brave Search",
            self.url,
            params={"q": query, "count": min(max_results, 20)},
            headers={
                "Accept": "application/json",
                "User-Agent": self.user_agent,
                "X-Subscription-Token": self._api_key,
            },
            timeout=self.timeout,
        )
        web = data.get("web") if isinstance(data, dict) else None
        results = web.get("results") if isinstance(web, dict) else None
        return _hits(results, "description", max_results)


@dataclass(frozen=True)
class BackendChoice:
    backend: SearchBackend | None
    reason: str  # why this backend, or why none is usable


def choose_backend(config: WebConfig, secrets: Secrets | None) -> BackendChoice:
    """`web.search_backend` (auto: Brave when its key is set, else SearXNG when a URL is
    configured) resolved against the secrets; no backend means web_search is unavailable."""
    key_name = config.brave_api_key_env
    key = secrets.get(key_name) if secrets is not None else None
    wanted = config.search_backend
    common = {"timeout": config.timeout, "user_agent": config.user_agent}
    if wanted in ("auto", "brave") and key:
        return BackendChoice(
            BraveBackend(key, url=config.brave_url, **common), f"{key_name} is set"
        )
    if wanted == "brave":
        return BackendChoice(
            None, f"web.search_backend is brave but the secret {key_name} is not set"
        )
    if config.searxng_url:
        return BackendChoice(
            SearxngBackend(config.searxng_url, **common), f"web.searxng_url is {config.searxng_url}"
        )
    if wanted == "searxng":
        return BackendChoice(None, "web.search_backend is searxng but web.searxng_url is not set")
    return BackendChoice(None, f"no search backend: set the secret {key_name} or web.searxng_url")


def backend_for(ctx: ToolContext) -> BackendChoice:
    """The backend this agent's config and secrets select."""
    return choose_backend(web_config(ctx), ctx.secrets)


def web_search_available(ctx: ToolContext) -> bool:
    """check_fn: web_search is offered only when a backend is usable for this profile
    (here, beside the backends, so offering web_search imports no tool code)."""
    return backend_for(ctx).backend is not None
