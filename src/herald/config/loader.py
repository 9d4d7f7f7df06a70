"""Read, validate and edit ``config.yaml``.

Every failure becomes one `ConfigError` whose message names the file, the key
path, what was expected and what was found, so the CLI can print it instead of
a traceback.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from herald.config.schema import HeraldConfig
from herald.config.shared_file import (
    SharedFileConflict,
    SharedFileLockTimeout,
    update_shared_file,
)

R = TypeVar("R")


class ConfigError(Exception):
    """A config file or key that cannot be used. `str(err)` is the user message."""


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def _known_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    """The valid keys at `loc` (the parent of a bad key) in the schema."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        annotation = field.annotation
        args = getattr(annotation, "__args__", ()) or (annotation,)
        nxt = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if nxt is None:
            return []
        current = nxt
    return sorted(getattr(current, "model_fields", {}))


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys silently; a config file with both is a
    mistake to show, not to guess about."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: let the base class report it
                continue
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first at line {first}, again at line {line})",
                    key_node.start_mark,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _expected(item: dict[str, Any]) -> str:
    """What pydantic expected, in the user's words (never a class name)."""
    if item.get("type") in ("model_type", "model_attributes_type", "dict_type"):
        return "a section (a mapping of keys)"
    expected = item.get("msg", "a valid value")
    expected = expected[0].lower() + expected[1:] if expected else expected
    return expected.removeprefix("input should be ").removeprefix("value error, ")


def _error_lines(err: ValidationError) -> list[str]:
    lines = []
    for item in err.errors():
        loc = tuple(item.get("loc", ()))
        key = ".".join(str(p) for p in loc) or "(top level)"
        if item.get("type") == "extra_forbidden":
            known = _known_keys(HeraldConfig, loc[:-1])
            hint = ""
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            if close:
                hint = f"; did you mean {'.'.join([*map(str, loc[:-1]), close[0]])!r}?"
            where = ".".join(map(str, loc[:-1])) or "the top level"
            lines.append(
                f"{key}: unknown key (expected one of {', '.join(known)} under {where}){hint}"
            )
            continue
        lines.append(f"{key}: expected {_expected(item)}, found {_describe(item.get('input'))}")
    return lines


def _format_validation_error(path: Path, err: ValidationError) -> str:
    lines = _error_lines(err)
    head = f"config error in {path}:"
    tail = "Fix the file (herald config edit) or reset a key (herald config set KEY VALUE)."
    return "\n".join([head, *("  " + line for line in lines), tail])


def read_raw(path: Path) -> dict[str, Any]:
    """The file as a dict (empty if missing); YAML errors name line and column."""
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    return _parse_raw(path, text)


def _parse_raw(path: Path, text: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(
            f"config error in {path}{where}: not valid YAML ({problem}).\n"
            "Fix the file (herald config edit)."
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"config error in {path}: expected a mapping of keys at the top level, "
            f"found {_describe(data)}"
        )
    return data


def validate(path: Path, data: dict[str, Any]) -> HeraldConfig:
    try:
        return HeraldConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_validation_error(path, err)) from None


def load_config(path: Path) -> HeraldConfig:
    """Load and validate `path`; defaults fill every missing key."""
    return validate(path, read_raw(path))


def parse_value(raw: str) -> Any:
    """A command-line value as YAML would read it: `true`, `3`, `null`, `[a, b]`."""
    try:
        return yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        return raw


def set_value(path: Path, dotted_key: str, raw_value: str) -> HeraldConfig:
    """Set one key (``model.name``) and write the file back, validated first."""
    parts = [p for p in dotted_key.split(".") if p]
    if not parts:
        raise ConfigError("config key is empty: use a dotted path such as model.name")
    value = parse_value(raw_value)

    def set_key(data: dict[str, Any]) -> HeraldConfig:
        node = data
        for part in parts[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise ConfigError(
                    f"config error in {path}: {part!r} holds {_describe(child)}, not a section"
                )
            node = child
        node[parts[-1]] = value
        try:
            return HeraldConfig.model_validate(data)
        except ValidationError as err:
            problems = "\n".join("  " + line for line in _error_lines(err))
            raise ConfigError(
                f"cannot set {dotted_key} to {raw_value!r}:\n{problems}\n{path} was not changed."
            ) from None

    return update_raw(path, set_key)


def update_raw(path: Path, edit: Callable[[dict[str, Any]], R]) -> R:
    """Edit ``config.yaml`` as a dict without losing a concurrent edit: `edit` changes the
    dict read under the file's lock (`herald.config.shared_file`) and may raise
    ConfigError; the result is validated before anything is written, and the file is
    rewritten only if the dict changed. `edit` may run again if another writer got in
    before the rename. Returns what `edit` returned."""

    def transform(text: str | None) -> tuple[str | None, R]:
        data = {} if text is None else _parse_raw(path, text)
        before = copy.deepcopy(data)
        result = edit(data)
        if data == before:
            return None, result
        validate(path, data)
        return _dump(data), result

    try:
        return update_shared_file(path, transform)
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    except SharedFileLockTimeout:
        raise ConfigError(
            f"{path} stayed locked by another Herald process; try again in a moment"
        ) from None
    except SharedFileConflict as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot write config file {path}: {exc.strerror or exc}") from None


def _dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_raw(path: Path, data: dict[str, Any]) -> None:
    """Replace the whole file with `data`, under the lock and atomically, so a crash never
    leaves half a config file. To change some keys, use `update_raw` instead: it re-reads
    under the lock, so a concurrent edit is not overwritten."""
    text = _dump(data)
    update_shared_file(path, lambda _current: (text, None))
