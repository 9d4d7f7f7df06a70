"""Packages that export lazily (herald.lazy) give the same names as an eager __init__."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

LAZY_PACKAGES = (
    "herald.safety",
    "herald.environments",
    "herald.cron",
    "herald.delegation",
    "herald.skills",
    "herald.plugins",
    "herald.memory",
    "herald.tools.web",
    "herald.config",
)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_exported_name_resolves_and_none_is_shadowed_by_a_submodule(name: str) -> None:
    """A lazy name spelled like a submodule would be the module once that is imported
    (the import system sets the attribute, so __getattr__ is never asked): such a name
    must be imported at once instead."""
    package = importlib.import_module(name)
    submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    lazy = {n for names in package._EXPORTS.values() for n in names}
    assert lazy & submodules == set()
    for export in package.__all__:
        assert getattr(package, export) is not None, export
    assert set(package.__all__) <= set(dir(package))


def test_an_unknown_name_is_an_attribute_error() -> None:
    import herald.safety

    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        herald.safety.nothing_here  # noqa: B018


def test_a_light_name_loads_only_its_module() -> None:
    probe = (
        "import sys\n"
        "from herald.safety import redact\n"
        "print(sorted(m for m in sys.modules if m.startswith('herald.safety.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['herald.safety.redaction']"
