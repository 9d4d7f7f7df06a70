"""Context (L3): the frozen system prompt, token accounting, the context engine that
compresses long histories, and the request-hygiene rules that keep prompt caches hitting."""

from herald.context import compressor as _compressor  # noqa: F401  (registers "compressor")
from herald.context.accounting import TokenAccountant, UsageAnchor
from herald.context.compressor import CompressionReport, CompressorEngine
from herald.context.engine_base import (
    ContextEngine,
    UnknownContextEngineError,
    create_engine,
    engine_names,
    register_engine,
)
from herald.context.project_files import ContextFile, discover_context_files
from herald.context.system_prompt import (
    DEFAULT_IDENTITY,
    PromptInputs,
    build_system_prompt,
    identity_of,
    prompt_mismatch,
    rewrite_identity,
)
from herald.context.tokens import (
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_text_tokens,
)
from herald.context.windows import lookup_window, resolve_context_window, unknown_window_notice

__all__ = [
    "DEFAULT_IDENTITY",
    "CompressionReport",
    "CompressorEngine",
    "ContextEngine",
    "ContextFile",
    "PromptInputs",
    "TokenAccountant",
    "UnknownContextEngineError",
    "UsageAnchor",
    "build_system_prompt",
    "create_engine",
    "discover_context_files",
    "engine_names",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_text_tokens",
    "identity_of",
    "lookup_window",
    "prompt_mismatch",
    "register_engine",
    "resolve_context_window",
    "rewrite_identity",
    "unknown_window_notice",
]
