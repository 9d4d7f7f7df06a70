"""The process-wide llama.cpp runtime: one loaded model per file, one generation at
a time.

The runtime is xllamacpp, which ships prebuilt wheels of llama.cpp and embeds
llama.cpp's own server (`xllamacpp.Server`): chat templates, JSON-schema
constrained sampling and prompt (KV) caching between calls all come from it.
Its loopback HTTP listener is only used for what the Python API lacks
(``/tokenize``, ``/apply-template``) and is locked with a random API key.

Every generation in the process runs under `GENERATION_LOCK`, so requests are
served one after the other (a 135M demo model gains nothing from batching, and
a cancel or timeout then never waits behind another caller's tokens); loading
runs under its own lock so that two threads asking for the same file load it
once. ``xllamacpp`` is imported here only by `load_model`, i.e. on the first
model call, never at import time.
"""

from __future__ import annotations

import atexit
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herald.providers.local.model_file import LocalModelUnavailable, require_runtime

GENERATION_LOCK = threading.Lock()
_LOAD_LOCK = threading.Lock()
_HTTP_TIMEOUT_SECONDS = 30.0


@dataclass
class RenderedPrompt:
    text: str  # the exact prompt string llama.cpp tokenizes
    tokens: list[int]


@dataclass
class LoadedModel:
    """A running `xllamacpp.Server` for one GGUF file, plus what we learned about it."""

    server: Any
    path: Path
    load_seconds: float
    extra_buffers_disabled: bool
    n_ctx: int
    n_ctx_train: int
    n_threads: int
    base_url: str
    api_key: str = field(repr=False)
    _http: Any = field(default=None, repr=False)

    def _post(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        if self._http is None:
            self._http = httpx.Client(
                base_url=self.base_url,
                headers={"Authorization": f"Bearer {self.api_key}"},
                timeout=_HTTP_TIMEOUT_SECONDS,
                trust_env=False,  # loopback: never through a proxy
            )
        response = self._http.post(route, json=body)
        response.raise_for_status()
        return response.json()

    def render(self, messages: list[dict[str, Any]]) -> RenderedPrompt:
        """The prompt llama.cpp builds for `messages` with the model's own chat
        template, and its tokens (as many as the call reports as prompt_tokens)."""
        text = self._post("/apply-template", {"messages": messages})["prompt"]
        tokens = self.tokenize(text, special=True)
        return RenderedPrompt(text=text, tokens=tokens)

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        body = {"content": text, "add_special": special, "parse_special": special}
        return list(self._post("/tokenize", body)["tokens"])

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None
        self.server = None  # the Server's destructor stops its threads


_MODELS: dict[tuple[str, int], LoadedModel] = {}
_exit_hook_registered = False


def _cpu_advertises_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return "amx_tile" in line.split()
    except OSError:
        pass
    return False


MAX_DEFAULT_THREADS = 8
THREADS_ENV = "HERALD_LOCAL_THREADS"
MAX_THREADS = 256  # asked for by name: more would only be thousands of idle threads


def default_threads() -> int:
    """`HERALD_LOCAL_THREADS` when set, else all usable cores, up to 8. On a 2-core
    machine half the cores halves the speed of a model this small; past ~8 threads a
    tiny model gains nothing. But llama.cpp's threads wait for each other spinning: on
    cores busy with other work (a build, a second test worker) a thread that is not
    running holds the rest up, and fewer threads are faster (on 2 cores beside one busy
    process, 1 thread ran the local-model tests in 31 s, 2 threads in 52 s)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw:
        if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_THREADS:
            raise LocalModelUnavailable(
                f"{THREADS_ENV}={raw!r} is not a number of threads: set it to a whole "
                f"number from 1 to {MAX_THREADS} (or unset it to use every core)"
            )
        return int(raw)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_DEFAULT_THREADS))


def load_model(path: Path, *, n_threads: int | None = None) -> LoadedModel:
    """The loaded model for `path`, loading it on first use (once per process)."""
    n_threads = n_threads or default_threads()
    key = (str(path), n_threads)
    cached = _MODELS.get(key)
    if cached is not None:
        return cached
    with _LOAD_LOCK:
        cached = _MODELS.get(key)
        if cached is not None:
            return cached
        loaded = _load(path, n_threads)
        _MODELS[key] = loaded
        global _exit_hook_registered
        if not _exit_hook_registered:
            # Stop the servers while xllamacpp's module still exists.
            atexit.register(_close_at_exit)
            _exit_hook_registered = True
        return loaded


def _params(xlc: Any, path: Path, n_threads: int, api_key: str, disable_extra: bool) -> Any:
    params = xlc.CommonParams()
    params.model.path = str(path)
    params.n_ctx = 0  # the context window the model was trained with, from the GGUF
    params.n_parallel = 1
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.verbosity = -1  # llama.cpp logs nothing to our stderr
    params.warmup = False  # a warm-up decode costs more than it saves for one call
    params.cache_prompt = True  # reuse the KV cache of the shared prompt prefix
    params.api_keys = [api_key]
    params.endpoint_props = True
    # On CPUs that advertise AMX inside a VM that does not enable the tile state,
    # llama.cpp's AMX weight repacking dies with a general-protection fault (the
    # whole process, not an exception). Loading without "extra buffer types" avoids
    # the AMX path; the prebuilt wheels are portable builds, but a CPU backend
    # variant may still pick it up.
    params.no_extra_bufts = disable_extra
    return params


def _load(path: Path, n_threads: int) -> LoadedModel:
    require_runtime()
    import httpx
    import xllamacpp

    disable_extra = _cpu_advertises_amx()
    api_key = secrets.token_urlsafe(24)
    started = time.perf_counter()
    try:
        server = xllamacpp.Server(_params(xllamacpp, path, n_threads, api_key, disable_extra))
    except (ValueError, RuntimeError, OSError) as exc:
        raise LocalModelUnavailable(
            f"llama.cpp could not load {path}: {exc}. Check that model.local_path names a "
            "GGUF model llama.cpp supports"
        ) from exc
    load_seconds = time.perf_counter() - started
    base_url = str(server.listening_address)
    headers = {"Authorization": f"Bearer {api_key}"}
    try:
        with httpx.Client(base_url=base_url, headers=headers, trust_env=False) as http:
            props = http.get("/props", timeout=_HTTP_TIMEOUT_SECONDS).json()
            models = http.get("/v1/models", timeout=_HTTP_TIMEOUT_SECONDS).json()
    except (httpx.HTTPError, ValueError) as exc:
        raise LocalModelUnavailable(
            f"llama.cpp loaded {path} but its embedded server did not answer: {exc}"
        ) from exc
    n_ctx = int(props["default_generation_settings"]["n_ctx"])
    meta = (models.get("data") or [{}])[0].get("meta") or {}
    return LoadedModel(
        server=server,
        path=path,
        load_seconds=load_seconds,
        extra_buffers_disabled=disable_extra,
        n_ctx=n_ctx,
        n_ctx_train=int(meta.get("n_ctx_train") or n_ctx),
        n_threads=n_threads,
        base_url=base_url,
        api_key=api_key,
    )


def loaded_models() -> list[LoadedModel]:
    return list(_MODELS.values())


def _close_all() -> None:
    for loaded in _MODELS.values():
        loaded.close()
    _MODELS.clear()


def _close_at_exit() -> None:
    # A daemon thread may still be generating: never wait for it at exit.
    if not GENERATION_LOCK.acquire(blocking=False):
        return
    try:
        _close_all()
    finally:
        GENERATION_LOCK.release()


def unload_all() -> None:
    """Free every loaded model (tests and benchmarks; the agent keeps them)."""
    with _LOAD_LOCK, GENERATION_LOCK:
        _close_all()
