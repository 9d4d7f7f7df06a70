"""A package's public names, each imported from its module when first asked for.

A package whose modules are costly to import (rule tables compiled at import, a
backend's helpers) re-exports its names through `lazy_exports`, so a process
imports only the modules it uses: ``from herald.safety import redact`` loads the
redaction module and not the command rules. The package states its exports as a
module-level table, module → names, which the import-cycle test reads as imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(``__getattr__``, ``__dir__``) for `package`'s ``__init__``: a name of
    ``exports[module]`` is imported from that module on first access, then kept on the
    package (so the next access costs nothing)."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
