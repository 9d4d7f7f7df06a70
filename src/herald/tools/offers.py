"""What offering a tool to the model takes, without importing the tool.

Offering a tool needs its name, toolset, the definition sent to the model and its
availability (`requires_env`, the `check_fn`); calling it needs its handler and
everything its module imports. A `ToolSpec` has both. A `ToolOffer` has only the
first part, read from a catalog compiled from the specs (`herald.toolbox` ships one
for the built-in capabilities), so a surface can offer a tool whose module is
imported only when the tool is called. Its check, when it has one, is named as
``module:function`` and imported on first use (a check lives in a light module).

`Offered` is what the toolset code reads of either.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

# A check takes the tool's ToolContext (herald.tools.registry, which imports this module).
Check = Callable[[Any], bool]


class Offered(Protocol):
    """A tool as the toolset code sees it when deciding what to offer."""

    @property
    def name(self) -> str: ...
    @property
    def toolset(self) -> str: ...
    @property
    def requires_env(self) -> tuple[str, ...]: ...
    @property
    def check_fn(self) -> Check | None: ...
    def definition(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ToolOffer:
    """One catalog entry: a tool offered by name before its module is imported."""

    name: str
    toolset: str
    body: Mapping[str, Any]  # the definition, as `ToolSpec.definition()` gives it
    requires_env: tuple[str, ...] = ()
    check: str | None = None  # "module:function"
    _resolved: list[Check] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def from_catalog(cls, name: str, toolset: str, entry: Mapping[str, Any]) -> ToolOffer:
        return cls(
            name=name,
            toolset=toolset,
            body=entry["definition"],
            requires_env=tuple(entry.get("requires_env") or ()),
            check=entry.get("check"),
        )

    @property
    def check_fn(self) -> Check | None:
        if self.check is None:
            return None
        if not self._resolved:
            module, _, function = self.check.partition(":")
            self._resolved.append(getattr(importlib.import_module(module), function))
        return self._resolved[0]

    def definition(self) -> dict[str, Any]:
        """A fresh copy of the definition sent to the model."""
        return copy.deepcopy(dict(self.body))


def as_json(value: Any) -> Any:
    """`value` as it reads back from JSON (tuples become lists), for comparisons."""
    return json.loads(json.dumps(value))


def catalog_entry(spec: Offered) -> dict[str, Any]:
    """What a catalog keeps of `spec` (JSON values only)."""
    check = spec.check_fn
    reference = None
    if check is not None:
        reference = f"{check.__module__}:{check.__qualname__}"
        resolved = getattr(importlib.import_module(check.__module__), check.__qualname__, None)
        if resolved is not check:
            raise ValueError(
                f"tool {spec.name!r}: its check {check.__qualname__} is not a module-level "
                f"function of {check.__module__}, so a catalog cannot name it; make it one"
            )
    return {
        "definition": as_json(spec.definition()),
        "requires_env": list(spec.requires_env),
        "check": reference,
    }


__all__ = ["Offered", "ToolOffer", "as_json", "catalog_entry"]
