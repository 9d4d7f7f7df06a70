"""The process-wide llama.cpp runtime: one loaded model per file, one generation at
a time.

llama.cpp contexts are not re-entrant, so every generation in the process runs
under `GENERATION_LOCK`; loading runs under its own lock so that two threads
asking for the same file load it once. ``llama_cpp`` is imported here only by
`load_model`, i.e. on the first model call, never at import time.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herald.providers.local.model_file import LocalModelUnavailable, require_runtime

GENERATION_LOCK = threading.Lock()
_LOAD_LOCK = threading.Lock()


@dataclass
class RenderedPrompt:
    text: str  # the exact prompt string llama.cpp tokenizes
    tokens: list[int]


@dataclass
class LoadedModel:
    """A loaded `llama_cpp.Llama` plus the chat formatter it uses, so the prompt we
    count and show is byte-for-byte the one the model is given."""

    llama: Any
    path: Path
    load_seconds: float
    formatter: Callable[..., Any]
    extra_buffers_disabled: bool
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def n_ctx(self) -> int:
        return int(self.llama.n_ctx())

    def render(self, messages: list[dict[str, Any]]) -> RenderedPrompt:
        # Same steps as llama-cpp-python's chat handler (format, then tokenize with
        # special tokens), so len(tokens) equals the prompt_tokens it would report.
        result = self.formatter(messages=messages)
        tokens = self.llama.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        return RenderedPrompt(text=result.prompt, tokens=list(tokens))


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


@contextmanager
def _model_params_without_extra_buffers(llama_cpp_lib: Any) -> Iterator[None]:
    """Make `Llama.__init__` load weights without llama.cpp's "extra buffer types"
    (weight repacking, including the AMX one). On CPUs that advertise AMX inside a
    VM that does not enable the tile state, the AMX matmul kernel dies with a
    general-protection fault (a segfault of the whole process, not an exception).
    `Llama` exposes no parameter for this, so its default-params factory is wrapped
    for the duration of the constructor (we hold `_LOAD_LOCK`)."""
    original = llama_cpp_lib.llama_model_default_params

    def default_params_without_extra_buffers() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    llama_cpp_lib.llama_model_default_params = default_params_without_extra_buffers
    try:
        yield
    finally:
        llama_cpp_lib.llama_model_default_params = original


def _make_formatter(llama: Any, llama_chat_format: Any) -> Callable[..., Any]:
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        # Old GGUFs carry no template; ChatML is what most small instruct models use.
        return llama_chat_format.format_chatml
    eos_id, bos_id = llama.token_eos(), llama.token_bos()
    eos = llama._model.token_get_text(eos_id) if eos_id != -1 else ""
    bos = llama._model.token_get_text(bos_id) if bos_id != -1 else ""
    return llama_chat_format.Jinja2ChatFormatter(
        template=template, eos_token=eos, bos_token=bos, stop_token_ids=[eos_id]
    )


MAX_DEFAULT_THREADS = 8


def default_threads() -> int:
    """All usable cores, up to 8. llama-cpp-python's own default for generation is
    half the cores, which on a 2-core machine halves the speed of a model this
    small (measured: 45 vs 90 tokens/s); past ~8 threads a tiny model gains nothing."""
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
            # Free models while llama_cpp's module globals still exist; left to the
            # garbage collector at interpreter teardown, Llama.__del__ raises.
            atexit.register(_close_at_exit)
            _exit_hook_registered = True
        return loaded


def _load(path: Path, n_threads: int) -> LoadedModel:
    require_runtime()
    import llama_cpp
    import llama_cpp.llama_chat_format as llama_chat_format
    import llama_cpp.llama_cpp as llama_cpp_lib

    disable_extra = _cpu_advertises_amx()
    # n_ctx=0: the context window the model was trained with, from the GGUF.
    options: dict[str, Any] = {
        "model_path": str(path), "n_ctx": 0, "n_threads": n_threads,
        "n_threads_batch": n_threads, "verbose": False,
    }
    started = time.perf_counter()
    try:
        if disable_extra:
            with _model_params_without_extra_buffers(llama_cpp_lib):
                llama = llama_cpp.Llama(**options)
        else:
            llama = llama_cpp.Llama(**options)
    except (ValueError, RuntimeError, OSError) as exc:
        raise LocalModelUnavailable(
            f"llama.cpp could not load {path}: {exc}. Check that model.local_path names a "
            "GGUF model llama.cpp supports"
        ) from exc
    load_seconds = time.perf_counter() - started
    if disable_extra and getattr(llama.model_params, "use_extra_bufts", False):
        llama.close()
        raise LocalModelUnavailable(
            "this CPU advertises AMX, which crashes llama.cpp in this environment, and the "
            "installed llama-cpp-python did not accept turning weight repacking off"
        )
    formatter = _make_formatter(llama, llama_chat_format)
    # create_chat_completion then formats with the very object we render with.
    llama.chat_handler = llama_chat_format.chat_formatter_to_chat_completion_handler(formatter)
    return LoadedModel(
        llama=llama,
        path=path,
        load_seconds=load_seconds,
        formatter=formatter,
        extra_buffers_disabled=disable_extra,
        metadata=dict(llama.metadata),
    )


def loaded_models() -> list[LoadedModel]:
    return list(_MODELS.values())


def _close_at_exit() -> None:
    # A daemon thread may still be generating: never wait for it at exit.
    if not GENERATION_LOCK.acquire(blocking=False):
        return
    try:
        for loaded in _MODELS.values():
            loaded.llama.close()
        _MODELS.clear()
    finally:
        GENERATION_LOCK.release()


def unload_all() -> None:
    """Free every loaded model (tests and benchmarks; the agent keeps them)."""
    with _LOAD_LOCK, GENERATION_LOCK:
        for loaded in _MODELS.values():
            loaded.llama.close()
        _MODELS.clear()
