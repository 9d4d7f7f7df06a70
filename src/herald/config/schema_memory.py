"""Config section `memory`: built-in memory limits, the external provider, recall."""

from __future__ import annotations

from herald.config.strict import StrictModel


class MemoryConfig(StrictModel):
    pass
