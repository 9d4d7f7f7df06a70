"""Gateway platform adapters, one module per entrance (`api`, `webhook`, `telegram`, …).

Each module exposes ``create_adapter(config, secrets, **kw) -> PlatformAdapter``; the
gateway lifecycle imports ``herald.gateway.adapters.<name>`` lazily, by name, only for
the platforms that are enabled, so the heavy libraries an adapter needs (FastAPI,
uvicorn, a chat SDK) never load on ``herald --version``. This package therefore
re-exports nothing.
"""
