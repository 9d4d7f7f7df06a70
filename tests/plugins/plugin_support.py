"""Real plugin directories and a real installed (entry-point) distribution for tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml


def write_plugin(
    root: Path,
    name: str,
    code: str,
    *,
    provides: list[str] | None = None,
    requires: dict | None = None,
    version: str = "0.1.0",
) -> Path:
    """`root/<name>/` with plugin.yaml and __init__.py holding `code`."""
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": name,
        "version": version,
        "description": f"the {name} test plugin",
        "provides": provides or [],
    }
    if requires:
        manifest["requires"] = requires
    (path / "plugin.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    (path / "__init__.py").write_text(textwrap.dedent(code), encoding="utf-8")
    return path


def install_entry_point_dist(
    site: Path,
    dist: str,
    plugin: str,
    package: str,
    code: str,
    *,
    version: str = "1.0.0",
    manifest: dict | None = None,
) -> Path:
    """A distribution as pip leaves it: the package, a ``*.dist-info`` with METADATA,
    RECORD and entry_points.txt (group herald.plugins) in `site` (put it on sys.path)."""
    pkg = site / package
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(code), encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
        f"Summary: the {plugin} plugin, installed\n",
        encoding="utf-8",
    )
    (info / "entry_points.txt").write_text(
        f"[herald.plugins]\n{plugin} = {package}\n", encoding="utf-8"
    )
    record = f"{package}/__init__.py,,\n{info.name}/METADATA,,\n{info.name}/entry_points.txt,,\n"
    if manifest is not None:  # plugin.yaml shipped next to the module, listed in RECORD
        (pkg / "plugin.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
        record += f"{package}/plugin.yaml,,\n"
    (info / "RECORD").write_text(record, encoding="utf-8")
    return info
