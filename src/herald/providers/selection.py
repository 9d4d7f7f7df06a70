"""Which endpoint to talk to: provider defaults, auto-detection, the fallback chain.

An `Endpoint` is everything needed to reach one model except the key itself
(keys come from `Secrets` through the credential pool). Resolution is pure:
config + secrets in, endpoints out; nothing here touches the network.

Auto-detection (``model.provider`` unset): ``OPENAI_API_KEY`` → openai, else
``ANTHROPIC_API_KEY`` → anthropic, else ``OPENROUTER_API_KEY`` → openrouter,
else the bundled local model. An unset provider with a ``model.base_url`` means
an OpenAI-compatible ``custom`` server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from herald.config.schema import HeraldConfig
    from herald.config.secrets import Secrets
    from herald.providers.base import ProviderTransport

LOCAL_DEFAULT_MODEL = "smollm2-135m-instruct"


class ProviderConfigError(ValueError):
    """The model/provider configuration cannot work; the message says what to set."""


@dataclass(frozen=True)
class ProviderDefaults:
    api_mode: str
    base_url: str | None
    key_env: str | None
    model: str | None


PROVIDER_DEFAULTS: dict[str, ProviderDefaults] = {
    "openai": ProviderDefaults(
        "chat_completions", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4.1-mini"
    ),
    "anthropic": ProviderDefaults(
        "anthropic_messages", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "claude-haiku-4-5"
    ),
    "openrouter": ProviderDefaults(
        "chat_completions",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        "openai/gpt-4.1-mini",
    ),
    "custom": ProviderDefaults("chat_completions", None, None, None),
    "local": ProviderDefaults("local", None, None, LOCAL_DEFAULT_MODEL),
}

# Order matters: the first provider whose key is set wins auto-detection.
AUTO_DETECT_ORDER = ("openai", "anthropic", "openrouter")


@dataclass(frozen=True)
class Endpoint:
    provider: str  # openai | anthropic | openrouter | custom | local
    api_mode: str  # chat_completions | anthropic_messages | local
    model: str
    base_url: str | None
    key_env: str | None  # the secret holding the key; None = no key used
    key_required: bool = True  # False for local and key-less custom servers
    local_path: str | None = None  # GGUF file for the local provider

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


@dataclass(frozen=True)
class Selection:
    """The main endpoint and whether its provider was auto-detected (the CLI prints
    a one-line notice when that picked the local model)."""

    endpoint: Endpoint
    auto_detected: bool

    @property
    def local_auto_selected(self) -> bool:
        return self.auto_detected and self.endpoint.provider == "local"


def detect_provider(secrets: Secrets) -> str:
    for provider in AUTO_DETECT_ORDER:
        key_env = PROVIDER_DEFAULTS[provider].key_env
        if key_env and secrets.numbered(key_env):
            return provider
    return "local"


def _field(cfg: Any, name: str) -> Any:
    return getattr(cfg, name, None)


def resolve_endpoint(
    model_cfg: Any, secrets: Secrets, *, local_path: str | None = None
) -> Endpoint:
    """The endpoint for a `ModelConfig`-like object (`ModelConfig`, `FallbackEntry`,
    or anything with provider/name/base_url/api_key_env)."""
    provider = _field(model_cfg, "provider")
    base_url = _field(model_cfg, "base_url")
    if provider is None:
        provider = "custom" if base_url else detect_provider(secrets)
    if provider not in PROVIDER_DEFAULTS:
        raise ProviderConfigError(
            f"unknown model.provider {provider!r}: use one of {', '.join(PROVIDER_DEFAULTS)}"
        )
    defaults = PROVIDER_DEFAULTS[provider]
    name = _field(model_cfg, "name") or defaults.model
    key_env = _field(model_cfg, "api_key_env") or defaults.key_env

    if provider == "custom":
        if not base_url:
            raise ProviderConfigError(
                "model.provider is 'custom' but model.base_url is not set: set model.base_url "
                "to your OpenAI-compatible server (e.g. http://localhost:11434/v1 for Ollama)"
            )
        if not name:
            raise ProviderConfigError(
                "model.provider is 'custom' but model.name is not set: set model.name to the "
                "model your server serves"
            )
        # Local servers usually need no key; one named explicitly is required.
        return Endpoint(
            provider,
            _field(model_cfg, "api_mode") or defaults.api_mode,  # a plugin's API shape
            name,
            base_url.rstrip("/"),
            key_env,
            key_required=key_env is not None,
        )
    if provider == "local":
        path = _field(model_cfg, "local_path") or local_path
        return Endpoint(
            "local",
            "local",
            name or LOCAL_DEFAULT_MODEL,
            None,
            None,
            key_required=False,
            local_path=path,
        )
    assert name is not None
    return Endpoint(
        provider,
        defaults.api_mode,
        name,
        (base_url or defaults.base_url or "").rstrip("/") or None,
        key_env,
        key_required=True,
    )


def resolve_selection(config: HeraldConfig, secrets: Secrets) -> Selection:
    model = config.model
    auto = model.provider is None and not model.base_url
    return Selection(resolve_endpoint(model, secrets), auto_detected=auto)


def resolve_chain(config: HeraldConfig, secrets: Secrets) -> list[Endpoint]:
    """The main endpoint followed by `model.fallbacks`, without repeats."""
    chain = [resolve_endpoint(config.model, secrets)]
    for index, entry in enumerate(config.model.fallbacks):
        try:
            endpoint = resolve_endpoint(entry, secrets, local_path=config.model.local_path)
        except ProviderConfigError as exc:
            raise ProviderConfigError(f"model.fallbacks[{index}]: {exc}") from None
        if endpoint not in chain:
            chain.append(endpoint)
    return chain


class _AuxiliaryView:
    """`auxiliary` with unset keys filled from `model` (same provider only: a model
    name or URL of one provider means nothing to another)."""

    def __init__(self, config: HeraldConfig, secrets: Secrets):
        aux, model = config.auxiliary, config.model
        main = resolve_endpoint(model, secrets)
        self.provider = aux.provider or main.provider
        same = self.provider == main.provider
        self.name = aux.name or (main.model if same else None)
        self.base_url = aux.base_url or (main.base_url if same else None)
        self.api_key_env = aux.api_key_env or (model.api_key_env if same else None)
        self.local_path = model.local_path


def resolve_auxiliary(config: HeraldConfig, secrets: Secrets) -> Endpoint:
    try:
        return resolve_endpoint(_AuxiliaryView(config, secrets), secrets)
    except ProviderConfigError as exc:
        if config.auxiliary.provider is None:
            raise
        raise ProviderConfigError(f"auxiliary: {exc}".replace("model.", "auxiliary.")) from None


def create_transport(
    endpoint: Endpoint, api_key: str | None, *, timeout: float, transport: str = "lean"
) -> ProviderTransport:
    """A transport for `endpoint` (SDKs are imported only when a call is made).

    `transport` is ``model.transport``: ``lean`` speaks the wire format over
    httpx2 without the SDKs (fast start, less memory), ``sdk`` uses them.

    The local transport lives in `herald.providers.local`, which must provide
    ``create_local_transport(endpoint, *, timeout) -> ProviderTransport``.
    """
    if transport not in ("lean", "sdk"):
        raise ProviderConfigError(f"unknown model.transport {transport!r}: use lean or sdk")
    if transport == "lean" and endpoint.api_mode in ("chat_completions", "anthropic_messages"):
        from herald.providers.lean import LeanAnthropicMessagesTransport, LeanOpenAIChatTransport

        lean_cls = (
            LeanOpenAIChatTransport
            if endpoint.api_mode == "chat_completions"
            else LeanAnthropicMessagesTransport
        )
        return lean_cls(
            provider=endpoint.provider,
            base_url=endpoint.base_url,
            api_key=api_key,
            timeout=timeout,
        )
    if endpoint.api_mode == "chat_completions":
        from herald.providers.openai_chat import OpenAIChatTransport

        return OpenAIChatTransport(
            provider=endpoint.provider,
            base_url=endpoint.base_url,
            api_key=api_key,
            timeout=timeout,
        )
    if endpoint.api_mode == "anthropic_messages":
        from herald.providers.anthropic_messages import AnthropicMessagesTransport

        return AnthropicMessagesTransport(
            provider=endpoint.provider,
            base_url=endpoint.base_url,
            api_key=api_key,
            timeout=timeout,
        )
    if endpoint.api_mode == "local":
        try:
            from herald.providers.local import create_local_transport
        except ImportError as exc:
            raise ProviderConfigError(
                "the local model provider is not available in this installation: set "
                "model.provider to openai, anthropic, openrouter or custom"
            ) from exc
        return create_local_transport(endpoint, timeout=timeout)
    factory = _PLUGIN_TRANSPORTS.get(endpoint.api_mode)
    if factory is not None:
        return factory(endpoint, api_key, timeout=timeout)
    raise ProviderConfigError(f"unsupported api mode {endpoint.api_mode!r}")


BUILTIN_API_MODES = ("chat_completions", "anthropic_messages", "local")
# Transports plugins add for new API shapes (herald.plugins registers them by api mode).
_PLUGIN_TRANSPORTS: dict[str, Any] = {}


def register_transport(api_mode: str, factory: Any) -> None:
    """``factory(endpoint, api_key, *, timeout) -> ProviderTransport`` for `api_mode`."""
    if api_mode in BUILTIN_API_MODES:
        raise ValueError(f"api mode {api_mode!r} is built in")
    _PLUGIN_TRANSPORTS[api_mode] = factory


def transport_modes(*, builtin_only: bool = False) -> tuple[str, ...]:
    """The api modes `create_transport` can build."""
    return BUILTIN_API_MODES if builtin_only else (*BUILTIN_API_MODES, *sorted(_PLUGIN_TRANSPORTS))
