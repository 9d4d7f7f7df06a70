"""What the entrances that serve an HTTP app of their own (the API, the web chat) share:
starting and stopping the embedded server, the runner's state store (or one of their
own when no runner offers it), and letting running turns finish on disconnect."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.gateway.served.server import EmbeddedServer

if TYPE_CHECKING:
    from herald.gateway.contracts import EventSink
    from herald.state import StateStore

TURN_DRAIN_SECONDS = 10.0


class ServedAdapter:
    """Mixin state: `_sink`, `_server`, `_store`, `_own_store`, `_turns`."""

    name: str
    _sink: EventSink | None = None
    _server: EmbeddedServer | None = None
    _store: StateStore | None = None
    _own_store: bool = False
    _turns: set[asyncio.Task[Any]]
    trusted_proxies: tuple[str, ...] = ()  # gateway.trusted_proxies

    def _state_root(self) -> Path:
        """The home whose state.db this entrance reads when no runner shares its own."""
        raise NotImplementedError

    async def _serve(self, sink: EventSink, build_app: Any, *, host: str, port: int) -> None:
        self._sink = sink
        store_for = getattr(sink, "store_for", None)
        if self._store is None and callable(store_for):  # share the runner's store
            self._store = store_for(getattr(sink, "default_profile", "default"))
        server = EmbeddedServer(
            build_app(self),
            host=host,
            port=port,
            name=self.name,
            trusted_proxies=self.trusted_proxies,
        )
        await server.start()
        self._server = server

    async def _stop_serving(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop()
        if self._turns:  # let running turns finish their bookkeeping
            await asyncio.wait(set(self._turns), timeout=TURN_DRAIN_SECONDS)
        if self._own_store and self._store is not None:
            self._store.close()
            self._store, self._own_store = None, False

    def store(self) -> StateStore:
        if self._store is None:
            from herald.state import StateStore

            self._store = StateStore(Path(self._state_root()) / "state.db")
            self._own_store = True
        return self._store


__all__ = ["ServedAdapter"]
