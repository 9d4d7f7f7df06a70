"""Memory (L2): MEMORY.md / USER.md, memory providers, the holographic fact store and
session search."""

from herald.memory.provider import MemoryProvider

__all__ = ["MemoryProvider"]
