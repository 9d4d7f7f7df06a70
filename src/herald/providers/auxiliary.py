"""`AuxiliaryClient`: a small, non-streaming model for side jobs (summaries,
titles, smart approval). Uses the `auxiliary` endpoint, which defaults to the
main model, and retries a little on its own (these jobs have no engine loop
around them): at most `MAX_RETRIES` retries, only for retryable failures,
rotating the key when the failure calls for it.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from herald.providers.backoff import backoff_delay, sleep_interruptible
from herald.providers.base import CallCancelled, CallSettings, NormalizedResponse, ProviderError
from herald.providers.client import KeyPools, missing_key_error
from herald.providers.errors import classify_error
from herald.providers.selection import Endpoint, create_transport, resolve_auxiliary

if TYPE_CHECKING:
    from herald.config.home import HeraldHome
    from herald.config.schema import HeraldConfig
    from herald.config.secrets import Secrets
    from herald.providers.base import ProviderTransport

log = logging.getLogger(__name__)

MAX_RETRIES = 2


class AuxiliaryClient:
    def __init__(
        self,
        config: HeraldConfig,
        secrets: Secrets,
        home: HeraldHome | None = None,
        *,
        endpoint: Endpoint | None = None,
    ):
        self.config = config
        self.endpoint = endpoint or resolve_auxiliary(config, secrets)
        state_path = home.credentials_state_path if home is not None else None
        self._pools = KeyPools(config, secrets, state_path)
        self._key = self._pools.any_key(self.endpoint)
        if self.endpoint.key_required and self._key is None:
            raise missing_key_error(self.endpoint, secrets, home.env_path if home else None)
        self._lock = threading.Lock()
        self._transports: dict[float, ProviderTransport] = {}

    @property
    def default_timeout(self) -> float:
        return self.config.auxiliary.timeout or self.config.model.timeout

    def _transport(self, timeout: float) -> ProviderTransport:
        with self._lock:
            transport = self._transports.get(timeout)
            if transport is None:
                transport = create_transport(
                    self.endpoint, self._key, timeout=timeout, transport=self.config.model.transport
                )
                self._transports[timeout] = transport
            return transport

    def _rotate(self, reason: Any) -> bool:
        pool = self._pools.pool_for(self.endpoint)
        if pool is None or self._key is None:
            return False
        pool.report_failure(self._key, reason)
        following = pool.current()
        if following is None or following == self._key:
            return False
        with self._lock:
            self._key = following
            for transport in self._transports.values():
                transport.close()
            self._transports.clear()
        return True

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
    ) -> NormalizedResponse:
        timeout = timeout or self.default_timeout
        settings = CallSettings(
            model=self.endpoint.model,
            max_tokens=max_tokens or self.config.auxiliary.max_tokens,
            timeout=timeout,
            stream=False,
        )
        agent = self.config.agent
        attempt = 0
        while True:
            transport = self._transport(timeout)
            request = transport.build_request(messages, None, settings)
            try:
                response = transport.call(request, stream=False, cancel=cancel)
            except ProviderError as exc:
                classified = classify_error(exc)
                if attempt >= MAX_RETRIES:
                    raise
                if classified.should_rotate_credential and self._rotate(classified.reason):
                    attempt += 1
                    continue
                if not classified.retryable:
                    raise
                delay = backoff_delay(
                    attempt,
                    base=agent.retry_base_delay,
                    cap=agent.retry_max_delay,
                    retry_after=classified.retry_after,
                )
                log.info("auxiliary call failed (%s); retrying in %.1fs", classified.reason, delay)
                if not sleep_interruptible(delay, cancel):
                    raise CallCancelled("cancelled while waiting to retry") from exc
                attempt += 1
                continue
            pool = self._pools.pool_for(self.endpoint)
            if pool is not None and self._key is not None:
                pool.report_success(self._key)
            return response

    def complete_text(self, system: str, user: str, **kw: Any) -> str:
        """The model's text answer to one system + user prompt ('' if it only
        called tools, which a side job should not ask for)."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return (self.complete(messages, **kw).text or "").strip()

    def close(self) -> None:
        with self._lock:
            for transport in self._transports.values():
                transport.close()
            self._transports.clear()
