"""Where plugins are found, without importing them.

Four sources, in this order; a later one wins when two have the same name:

1. bundled — ``herald/plugins/bundled/<name>/`` (always loaded unless disabled);
2. user — ``$HERALD_HOME/plugins/<name>/``;
3. project — ``./.herald/plugins/<name>/``, only with ``plugins.project: true``;
4. installed — distributions declaring an entry point in group ``herald.plugins``
   (``name = "package.module"`` or ``"package.module:register"``).

A directory plugin has ``plugin.yaml`` and ``__init__.py`` defining
``register(ctx)``. An installed one may ship ``plugin.yaml`` next to its module;
otherwise its distribution's name, version and summary stand in.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Literal

from herald.plugins.manifest import MANIFEST, ManifestError, PluginManifest, read_manifest

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "herald.plugins"
BUNDLED_DIR = Path(__file__).parent / "bundled"
PROJECT_SUBDIR = Path(".herald") / "plugins"

Source = Literal["bundled", "user", "project", "installed"]


@dataclass(frozen=True)
class Candidate:
    """A plugin found somewhere: its manifest, or why the manifest is unusable."""

    name: str
    source: Source
    path: Path | None = None  # the plugin's directory (directory plugins)
    entry_point: metadata.EntryPoint | None = None
    manifest: PluginManifest | None = None
    problem: str | None = None
    shadowed: tuple[str, ...] = ()  # sources of same-named plugins this one replaced

    @property
    def where(self) -> str:
        if self.path is not None:
            return str(self.path)
        if self.entry_point is not None:
            dist = self.entry_point.dist
            owner = f" (from {dist.name} {dist.version})" if dist is not None else ""
            return f"entry point {self.entry_point.value}{owner}"
        return "?"


def discover(
    *,
    user_dir: Path | None,
    project_root: Path | None = None,
    bundled_dir: Path = BUNDLED_DIR,
) -> dict[str, Candidate]:
    """Every plugin found, by name (later sources replace earlier ones)."""
    found: dict[str, Candidate] = {}
    sources: list[tuple[Source, Path | None]] = [("bundled", bundled_dir), ("user", user_dir)]
    if project_root is not None:
        sources.append(("project", project_root / PROJECT_SUBDIR))
    for source, root in sources:
        for candidate in _directory_plugins(source, root):
            _put(found, candidate)
    for candidate in _installed_plugins():
        _put(found, candidate)
    return found


def _put(found: dict[str, Candidate], candidate: Candidate) -> None:
    earlier = found.get(candidate.name)
    if earlier is not None:
        log.info(
            "plugin %s from %s replaces the one from %s",
            candidate.name,
            candidate.source,
            earlier.source,
        )
        candidate = replace(candidate, shadowed=(*earlier.shadowed, earlier.source))
    found[candidate.name] = candidate


def _directory_plugins(source: Source, root: Path | None) -> list[Candidate]:
    if root is None or not root.is_dir():
        return []
    out: list[Candidate] = []
    for path in sorted(root.iterdir()):
        if not path.is_dir() or path.name.startswith((".", "_")):
            continue
        manifest_path = path / MANIFEST
        if not manifest_path.is_file():
            continue
        try:
            manifest = read_manifest(manifest_path)
        except ManifestError as exc:
            out.append(Candidate(path.name, source, path=path, problem=str(exc)))
            continue
        problem = None
        if manifest.name != path.name:
            problem = (
                f"plugin.yaml names {manifest.name!r} but the directory is {path.name!r}; "
                "rename one so they match"
            )
        elif not (path / "__init__.py").is_file():
            problem = f"{path} has no __init__.py with a register(ctx) function"
        # Named by its directory: that is the name a user enables and sees in messages.
        out.append(Candidate(path.name, source, path=path, manifest=manifest, problem=problem))
    return out


def _installed_plugins() -> list[Candidate]:
    out: list[Candidate] = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        manifest, problem = _installed_manifest(ep)
        out.append(
            Candidate(ep.name, "installed", entry_point=ep, manifest=manifest, problem=problem)
        )
    return out


def _installed_manifest(ep: metadata.EntryPoint) -> tuple[PluginManifest | None, str | None]:
    dist = ep.dist
    module = ep.value.split(":", 1)[0].strip()
    shipped = _shipped_manifest(dist, module)
    if shipped is not None:
        try:
            manifest = read_manifest(shipped)
        except ManifestError as exc:
            return None, str(exc)
        if manifest.name != ep.name:
            return manifest, (
                f"plugin.yaml names {manifest.name!r} but the entry point is {ep.name!r}; "
                "make them match"
            )
        return manifest, None
    try:
        return PluginManifest(
            name=ep.name,
            version=dist.version if dist is not None else "0.0.0",
            description=(dist.metadata.get("Summary") or "") if dist is not None else "",
        ), None
    except ValueError as exc:
        return None, f"entry point name {ep.name!r} is not a plugin name: {exc}"


def _shipped_manifest(dist: metadata.Distribution | None, module: str) -> Path | None:
    """plugin.yaml inside the module's package, found through the distribution's file
    list (nothing is imported)."""
    if dist is None:
        return None
    package = module.replace(".", "/")
    for file in dist.files or ():
        text = str(file)
        if text in (f"{package}/{MANIFEST}", f"{package.rsplit('/', 1)[0]}/{MANIFEST}"):
            located = Path(str(dist.locate_file(file)))
            if located.is_file():
                return located
    return None


__all__ = ["BUNDLED_DIR", "ENTRY_POINT_GROUP", "PROJECT_SUBDIR", "Candidate", "Source", "discover"]
