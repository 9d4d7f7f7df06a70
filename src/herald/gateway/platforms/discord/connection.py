"""A discord.py client whose REST base and gateway address are its own.

discord.py keeps both as class attributes (`Route.BASE`, `DiscordWebSocket.DEFAULT_GATEWAY`);
setting those would redirect every client in the process. Instead this client's HTTP
layer rewrites the prefix of each request it makes and of the gateway URL it dials,
so a Herald pointed at a local fake (tests) or a REST proxy changes nothing else.
Resumes go wherever READY's `resume_gateway_url` says, as with Discord itself.
"""

from __future__ import annotations

from typing import Any

DISCORD_API_BASE = "https://discord.com/api/v10"
DISCORD_GATEWAY = "wss://gateway.discord.gg/"


def make_client(
    *,
    intents: Any,
    api_base: str | None = None,
    gateway_url: str | None = None,
    client_class: Any = None,
    **options: Any,
) -> Any:
    """A `discord.Client` (or `client_class`) talking to `api_base` / `gateway_url`."""
    import discord
    from discord.http import HTTPClient, Route
    from discord.webhook.async_ import AsyncWebhookAdapter, async_context

    base_cls = client_class or discord.Client
    client = base_cls(intents=intents, **options)
    if not api_base and not gateway_url:
        return client
    rest_from, rest_to = Route.BASE, (api_base or Route.BASE).rstrip("/")
    gateway_from = str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    gateway_to = gateway_url or gateway_from

    class RoutedHTTPClient(HTTPClient):  # type: ignore[misc]
        async def request(self, route: Any, *args: Any, **kwargs: Any) -> Any:
            if route.url.startswith(rest_from):
                route.url = rest_to + route.url[len(rest_from) :]
            return await super().request(route, *args, **kwargs)

        async def ws_connect(self, url: str, *, compress: int = 0) -> Any:
            if url.startswith(gateway_from):
                url = gateway_to.rstrip("/") + "/" + url[len(gateway_from) :].lstrip("/")
            return await super().ws_connect(url, compress=compress)

    class RoutedWebhookAdapter(AsyncWebhookAdapter):  # type: ignore[misc]
        async def request(self, route: Any, *args: Any, **kwargs: Any) -> Any:
            if route.url.startswith(rest_from):
                route.url = rest_to + route.url[len(rest_from) :]
            return await super().request(route, *args, **kwargs)

    # The connection state holds this same object, so its class is swapped in place
    # rather than replaced by a new client (which the state would not see).
    client.http.__class__ = RoutedHTTPClient
    routed_webhooks = RoutedWebhookAdapter()
    original_setup_hook = client.setup_hook

    async def setup_hook() -> None:
        # Interaction responses go through a webhook adapter held in a context variable;
        # set in the task that logs in, it is inherited by every event task after it.
        async_context.set(routed_webhooks)
        await original_setup_hook()

    client.setup_hook = setup_hook
    return client
