"""The gateway's chat platforms: one package per platform.

``herald.gateway.platforms.<name>/`` holds everything about one platform — its
adapter (``adapter.py``), event parsing, delivery, formatting and config — and
exposes ``create_adapter(config, secrets, **kw) -> PlatformAdapter`` from its
``__init__``, loaded lazily so that importing the package stays cheap. The gateway
lifecycle imports ``herald.gateway.platforms.<name>`` by name, only for the platforms
that are enabled, so the heavy libraries an adapter needs (FastAPI, uvicorn, a chat
SDK) never load on ``herald --version``. Its fake server lives in
``herald.testing.fake_<name>/``, and every platform passes the adapter contract suite
(``tests/gateway/contract/``).

What several HTTP-served entrances share (the embedded server, bearer checks, per-key
locks) is in `herald.gateway.served`; what every adapter shares (the contracts, the
health recorder, the inbound ledger) is in `herald.gateway` itself. This package
re-exports nothing.
"""
