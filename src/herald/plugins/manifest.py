"""`plugin.yaml`: what a plugin says about itself, and whether this Herald can run it.

```yaml
name: weather              # letters, digits, - and _; the name in plugins.enabled
version: 0.1.0
description: Current weather for a city
provides: [tools, hooks]   # tools | toolsets | hooks | commands | slash_commands |
                           # platforms | memory_provider | context_engine | model_provider
requires:
  python: ["httpx>=0.27"]  # distributions that must be installed
  herald: ">=0.1,<1"       # the Herald versions it works with
```
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator

from herald.config.strict import StrictModel

MANIFEST = "plugin.yaml"
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,47}$")

Provides = Literal[
    "tools",
    "toolsets",
    "hooks",
    "commands",
    "slash_commands",
    "platforms",
    "memory_provider",
    "context_engine",
    "model_provider",
]


class ManifestError(ValueError):
    """A plugin.yaml that cannot be read or does not validate."""


class Requires(StrictModel):
    python: list[str] = Field(default_factory=list, description="required distributions")
    herald: str | None = Field(None, description="Herald version range, e.g. '>=0.1,<1'")


class PluginManifest(StrictModel):
    name: str
    version: str = "0.0.0"
    description: str = ""
    provides: list[Provides] = Field(default_factory=list)
    requires: Requires = Field(default_factory=Requires)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME_RE.match(value):
            raise ValueError(
                "a plugin name starts with a letter and has only letters, digits, - and _"
            )
        return value


def read_manifest(path: Path) -> PluginManifest:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ManifestError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path} must be a mapping (name, version, provides, ...)")
    try:
        return PluginManifest.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'plugin.yaml'}: {e['msg']}"
            for e in exc.errors()
        )
        raise ManifestError(f"{path} is invalid: {problems}") from None


def unmet_requirements(manifest: PluginManifest, herald_version: str) -> str | None:
    """What this installation lacks to run the plugin (with what to do), else None."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    wanted = manifest.requires.herald
    if wanted:
        try:
            spec = SpecifierSet(wanted)
        except InvalidSpecifier:
            return f"requires.herald {wanted!r} is not a version range (e.g. '>=0.1,<1')"
        if Version(herald_version) not in spec:
            return (
                f"it needs Herald {wanted} and this is Herald {herald_version}; "
                "update the plugin or Herald"
            )
    missing: list[str] = []
    for text in manifest.requires.python:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            return f"requires.python entry {text!r} is not a requirement (e.g. 'httpx>=0.27')"
        try:
            have = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if req.specifier and not req.specifier.contains(have, prereleases=True):
            missing.append(f"{text} (installed: {have})")
    if missing:
        quoted = " ".join(f"'{m.split(' (')[0]}'" for m in missing)
        return f"missing Python packages: {', '.join(missing)}; run: pip install {quoted}"
    return None


__all__ = [
    "MANIFEST",
    "ManifestError",
    "PluginManifest",
    "Provides",
    "Requires",
    "read_manifest",
    "unmet_requirements",
]
