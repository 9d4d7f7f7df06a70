"""`ModelClient`: the main model as the turn engine sees it.

It owns the fallback chain, one credential pool per (provider, key variable),
the active endpoint and key, and a lazily built transport. It never retries on
its own: the engine classifies a failure and then asks for
`rotate_credential` or `fall_back` and retries. After either, build the
request again — a fallback may speak a different API.

A missing key for the main endpoint is reported when the client is built
(`MissingSecretError` naming the variable and the home's ``.env``), so a
misconfiguration shows up before the first message, not in the middle of it.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.providers.base import CallSettings, DeltaCallback, NormalizedResponse
from herald.providers.credentials import CredentialPool
from herald.providers.selection import (
    Endpoint,
    ProviderConfigError,
    create_transport,
    resolve_chain,
)

if TYPE_CHECKING:
    from herald.config.home import HeraldHome
    from herald.config.schema import HeraldConfig
    from herald.config.secrets import Secrets
    from herald.providers.base import ProviderTransport
    from herald.providers.errors import ClassifiedError

log = logging.getLogger(__name__)


def missing_key_error(endpoint: Endpoint, secrets: Secrets, env_path: Path | None) -> Exception:
    from herald.config.secrets import MissingSecretError

    where = secrets.env_file or env_path
    place = f"add {endpoint.key_env}=... to {where}" if where else f"set {endpoint.key_env}"
    return MissingSecretError(
        f"{endpoint.key_env} is not set: the {endpoint.provider} provider needs an API key. "
        f"{place[0].upper()}{place[1:]} (or export it in the environment), or choose another "
        "model.provider in config.yaml."
    )


class KeyPools:
    """Credential pools shared by every endpoint that uses the same key variable."""

    def __init__(self, config: HeraldConfig, secrets: Secrets, state_path: Path | None):
        self._config = config
        self._secrets = secrets
        self._state_path = state_path
        self._pools: dict[tuple[str, str], CredentialPool] = {}

    def pool_for(self, endpoint: Endpoint) -> CredentialPool | None:
        if endpoint.key_env is None:
            return None
        slot = (endpoint.provider, endpoint.key_env)
        if slot not in self._pools:
            self._pools[slot] = CredentialPool(
                endpoint.provider,
                self._secrets.numbered(endpoint.key_env),
                state_path=self._state_path,
                cooldowns=self._config.credentials,
            )
        return self._pools[slot]

    def usable_key(self, endpoint: Endpoint) -> str | None:
        pool = self.pool_for(endpoint)
        return pool.current() if pool is not None else None

    def any_key(self, endpoint: Endpoint) -> str | None:
        """The first usable key, else the best of the cooling-down ones: trying a key
        beats refusing to work (the provider has the last word)."""
        pool = self.pool_for(endpoint)
        return pool.best_effort() if pool is not None else None


class ModelClient:
    def __init__(
        self,
        config: HeraldConfig,
        secrets: Secrets,
        home: HeraldHome | None = None,
        *,
        chain: list[Endpoint] | None = None,
    ):
        self.config = config
        self.secrets = secrets
        self._env_path = home.env_path if home is not None else None
        self.chain: list[Endpoint] = (
            list(chain) if chain is not None else resolve_chain(config, secrets)
        )
        if not self.chain:
            raise ProviderConfigError("no model endpoint configured")
        self.auto_detected = (
            chain is None and config.model.provider is None and not config.model.base_url
        )
        state_path = home.credentials_state_path if home is not None else None
        self._pools = KeyPools(config, secrets, state_path)
        self._lock = threading.RLock()
        self._index = 0
        self._transport: ProviderTransport | None = None
        main = self.chain[0]
        self._key = self._pools.any_key(main)
        if main.key_required and self._key is None:
            raise missing_key_error(main, secrets, self._env_path)

    @classmethod
    def from_chain(
        cls,
        chain: list[Endpoint],
        secrets: Secrets,
        *,
        config: HeraldConfig | None = None,
        home: HeraldHome | None = None,
    ) -> ModelClient:
        from herald.config.schema import HeraldConfig

        return cls(config or HeraldConfig(), secrets, home, chain=chain)

    # -- state -------------------------------------------------------------------

    @property
    def endpoint(self) -> Endpoint:
        return self.chain[self._index]

    @property
    def local_auto_selected(self) -> bool:
        """True when nothing was configured and the bundled local model was chosen
        (the CLI prints a one-line notice)."""
        return self.auto_detected and self.chain[0].provider == "local"

    def identity(self) -> tuple[str, str]:
        return self.endpoint.provider, self.endpoint.model

    def pool(self, endpoint: Endpoint | None = None) -> CredentialPool | None:
        return self._pools.pool_for(endpoint or self.endpoint)

    @property
    def transport(self) -> ProviderTransport:
        with self._lock:
            if self._transport is None:
                self._transport = create_transport(
                    self.endpoint,
                    self._key,
                    timeout=self.config.model.timeout,
                    transport=self.config.model.transport,
                )
            return self._transport

    def settings(self) -> CallSettings:
        model = self.config.model
        return CallSettings(
            model=self.endpoint.model,
            max_tokens=model.max_tokens,
            temperature=model.temperature,
            timeout=model.timeout,
            stream=model.stream,
        )

    # -- calls -------------------------------------------------------------------

    def build_request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        return self.transport.build_request(messages, tools, self.settings())

    def call(
        self,
        request: dict[str, Any],
        *,
        stream: bool | None = None,
        on_delta: DeltaCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> NormalizedResponse:
        with self._lock:
            transport, key, endpoint = self.transport, self._key, self.endpoint
        response = transport.call(
            request,
            stream=self.config.model.stream if stream is None else stream,
            on_delta=on_delta,
            cancel=cancel,
        )
        pool = self._pools.pool_for(endpoint)
        if pool is not None and key is not None:
            pool.report_success(key)
        return response

    # -- recovery ------------------------------------------------------------------

    def _switch(self, index: int, key: str | None) -> None:
        old = self._transport
        refused = bool(getattr(old, "stream_refused", False)) and index == self._index
        self._index, self._key, self._transport = index, key, None
        if old is not None:
            old.close()
        if refused:  # same server, new key: it still cannot stream
            self.transport.stream_refused = True  # type: ignore[attr-defined]

    def rotate_credential(self, classified: ClassifiedError) -> bool:
        """Report the failure against the active key and switch to the next usable
        key of the same endpoint. False when there is none."""
        with self._lock:
            pool = self._pools.pool_for(self.endpoint)
            if pool is None or self._key is None:
                return False
            pool.report_failure(self._key, classified.reason)
            following = pool.current()
            if following is None or following == self._key:
                return False
            log.info(
                "rotating to %s key #%d", self.endpoint.provider, pool.keys.index(following) + 1
            )
            self._switch(self._index, following)
            return True

    def fall_back(self, classified: ClassifiedError) -> bool:
        """Switch to the next endpoint of the chain that differs from the failing one
        and has a usable key (or needs none). False when the chain is exhausted."""
        with self._lock:
            failing = self.endpoint
            for index in range(self._index + 1, len(self.chain)):
                candidate = self.chain[index]
                if candidate == failing:
                    continue
                key = self._pools.usable_key(candidate)
                if candidate.key_required and key is None:
                    log.info(
                        "skipping fallback %s: no usable %s", candidate.label, candidate.key_env
                    )
                    continue
                log.warning(
                    "falling back from %s to %s (%s)",
                    failing.label,
                    candidate.label,
                    classified.reason,
                )
                self._switch(index, key)
                return True
            return False

    def close(self) -> None:
        with self._lock:
            if self._transport is not None:
                self._transport.close()
                self._transport = None
