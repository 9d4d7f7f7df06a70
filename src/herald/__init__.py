"""Herald: a long-lived personal AI agent — one process, one memory, many entrances.

Kept import-light on purpose: ``herald --version`` must not load any SDK.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
