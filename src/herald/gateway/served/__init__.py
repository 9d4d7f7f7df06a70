"""What the gateway's HTTP-served entrances (API, webhook, web) share: the embedded
uvicorn server on the gateway's own loop and the config checks around it (``server``),
the request/response adapter base (``response``), the served-adapter lifecycle
(``adapter``) and per-key asyncio locks (``locks``). Platform packages import the
modules directly; this package re-exports nothing.
"""
