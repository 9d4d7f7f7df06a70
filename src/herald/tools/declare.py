"""`@tool`: declare a tool once, on a typed function.

The JSON schema sent to the model and the argument errors the model reads both
come from the function's signature and docstring, so a tool is written in one
place::

    @tool(toolset="file", parallel_safe=True, reads=("path",))
    def read_file(ctx: ToolContext, path: str, offset: int = 1, limit: int = 400) -> str:
        \"\"\"Read a text file with line numbers.

        Args:
            path: the file to read, absolute or relative to the working directory
            offset: the first line to show (1-based)
        \"\"\"

The decorator returns the `ToolSpec` (a value): a capability package exports
its specs (for example as a tuple ``TOOLS``) and a composition root adds them
to a registry. Declaring registers nothing. ``schema=`` keeps an explicit
JSON schema possible for tools whose arguments do not fit a signature; the
function then receives the argument dict as keyword arguments.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from pydantic import Field

from herald.tools.registry import (
    DEFAULT_MAX_RESULT_CHARS,
    ToolArgumentError,
    ToolContext,
    ToolSpec,
    check_path_arguments,
    check_trust_declaration,
)

# A true/false argument: strict, so after coercion ("true" -> True) 1 or "yes" is refused
# with a clear error instead of being read as false.
Flag = Annotated[bool, Field(strict=True)]

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$", re.IGNORECASE)
_ARG_LINE = re.compile(r"^\s{2,}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


def tool(
    *,
    toolset: str,
    name: str | None = None,
    description: str | None = None,
    parallel_safe: bool = False,
    reads: Iterable[str] = (),
    writes: Iterable[str] = (),
    schema: dict[str, Any] | None = None,
    check: Callable[[ToolContext], bool] | None = None,
    requires_env: Iterable[str] = (),
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    restore: Callable[[list[dict[str, Any]], ToolContext], None] | None = None,
    controls: Iterable[str] = (),
    consequential: bool = False,
    untrusted: str | None = None,
    consequence: Callable[[dict[str, Any], ToolContext], bool] | None = None,
    attributed: Iterable[str] = (),
    outbound: Iterable[str] = (),
) -> Callable[[Callable[..., Any]], ToolSpec]:
    """Turn ``fn(ctx, **arguments)`` into a `ToolSpec`.

    ``reads`` / ``writes`` name the arguments that hold paths the tool reads or
    writes (the batch planner keeps writers apart from overlapping calls). ``controls``
    names the arguments that decide where a consequential action goes (a path, command,
    URL or recipient; every other argument is data), ``consequential`` marks a tool whose
    call changes something outside the session, and ``untrusted`` (a source such as
    ``"plugin:name"``) marks the tool's results as untrusted content (herald.safety.taint).
    ``consequence(args, ctx)`` narrows ``consequential`` per call (a read-only command is
    not), and ``attributed`` names arguments kept for later sessions (memory, skills):
    an approved value from untrusted content is stored with its source. outbound names
    data arguments whose text is sent to other people (a message body, a payment's
    subject): the links, addresses, account numbers and codes in them are checked like
    controls, the prose around them is not."""
    controls, attributed, outbound = tuple(controls), tuple(attributed), tuple(outbound)

    def declare(fn: Callable[..., Any]) -> ToolSpec:
        tool_name = name or fn.__name__
        summary, arg_docs = _parse_docstring(fn.__doc__ or "")
        if schema is not None:
            parameters = schema.get("parameters", schema)
            validate = None
        else:
            parameters, validate = _schema_from_signature(tool_name, fn, arg_docs)
        check_path_arguments(tool_name, parameters, tuple(reads), tuple(writes))
        check_trust_declaration(
            tool_name, parameters, (*controls, *attributed, *outbound), untrusted
        )
        text = description if description is not None else summary
        if not text and schema is not None:
            text = str(schema.get("description") or "")
        if not text:
            raise ValueError(f"tool {tool_name!r} needs a docstring or description=")

        def handler(args: dict[str, Any], ctx: ToolContext) -> Any:
            values = validate(args) if validate is not None else args
            return fn(ctx, **values)

        handler.__name__ = f"{tool_name}_handler"
        return ToolSpec(
            name=tool_name,
            toolset=toolset,
            schema={"name": tool_name, "description": text, "parameters": parameters},
            handler=handler,
            check_fn=check,
            requires_env=tuple(requires_env),
            parallel_safe=parallel_safe,
            reads=tuple(reads),
            writes=tuple(writes),
            max_result_chars=max_result_chars,
            restore_fn=restore,
            controls=controls,
            consequential=consequential,
            untrusted=untrusted,
            consequence=consequence,
            attributed=attributed,
            outbound=outbound,
        )

    return declare


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (everything before an ``Args:`` section) and per-argument text."""
    lines = inspect.cleandoc(doc).splitlines() if doc.strip() else []
    summary: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if not in_args:
            summary.append(line)
            continue
        match = _ARG_LINE.match("  " + line if not line.startswith(" ") else line)
        if match and not line.startswith("      "):
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif current is not None and line.strip():
            args[current] += " " + line.strip()
        elif not line.strip():
            current = None
    text = " ".join(" ".join(summary).split())
    return text, args


def _schema_from_signature(
    tool_name: str, fn: Callable[..., Any], arg_docs: dict[str, str]
) -> tuple[dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]]]:
    from pydantic import ConfigDict, ValidationError, create_model

    hints = typing.get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())
    if not params or params[0].name != "ctx":
        raise TypeError(f"tool {tool_name!r}: the first parameter must be `ctx: ToolContext`")
    fields: dict[str, Any] = {}
    for param in params[1:]:
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(f"tool {tool_name!r}: *args/**kwargs cannot be described to a model")
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        # Annotated keeps the constraints of an annotation such as
        # Annotated[int, Field(ge=1)]; a Field() in the default slot would replace them.
        described = Annotated[annotation, Field(description=arg_docs.get(param.name))]
        fields[param.name] = (described, default)
    model = create_model(  # type: ignore[call-overload]
        f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    parameters = _clean_schema(model.model_json_schema())
    names = [p.name for p in params[1:]]
    optional = {p.name for p in params[1:] if p.default is not inspect.Parameter.empty}

    def validate(args: dict[str, Any]) -> dict[str, Any]:
        # A null optional argument means "not given" (strict-mode models send null for
        # every field they do not use), so its default applies.
        args = {k: v for k, v in args.items() if not (v is None and k in optional)}
        try:
            parsed = model.model_validate(args)
        except ValidationError as exc:
            raise ToolArgumentError(_explain(tool_name, exc)) from None
        return {n: getattr(parsed, n) for n in names}

    return parameters, validate


_KINDS = {
    "string": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "list": "a list",
    "dict": "an object",
}


def _explain(tool_name: str, exc: Any) -> str:
    """Pydantic's errors in the words the hand-written checks use, so the model reads
    "offset must be at least 1, got 0" whichever way a tool was declared."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        problems.append(_problem(tool_name, where, error))
    return f"invalid arguments for {tool_name}: " + "; ".join(dict.fromkeys(problems))


def _problem(tool_name: str, where: str, error: dict[str, Any]) -> str:
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    given = error.get("input")
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        parent, _, key = where.rpartition(".")
        if parent:
            return f"'{key}' is not a field of {parent}"
        return f"'{where}' is not an argument of {tool_name}"
    if kind == "literal_error":
        return f"{where} must be one of {ctx.get('expected')}, got {given!r}"
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        word = "at least" if kind == "greater_than_equal" else "more than"
        return f"{where} must be {word} {bound}, got {given!r}"
    if kind in ("less_than_equal", "less_than"):
        bound = ctx.get("le", ctx.get("lt"))
        word = "at most" if kind == "less_than_equal" else "less than"
        return f"{where} must be {word} {bound}, got {given!r}"
    if kind in ("string_too_short", "too_short"):
        return f"{where} must not be empty"
    if kind in ("string_too_long", "too_long"):
        return f"{where} is too long (at most {ctx.get('max_length')})"
    base = kind.split("_", 1)[0]
    if kind.endswith(("_type", "_parsing")) and base in _KINDS:
        return f"{where} must be {_KINDS[base]}, got {_describe(given)}"
    return f"{where}: {error.get('msg', 'invalid')}"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str | int | float) and len(repr(value)) <= 40:
        return repr(value)
    return f"a {type(value).__name__}"


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Pydantic's schema without titles, with ``X | None`` shown as X (fewer bytes per
    request; a missing optional argument is simply left out)."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node and node["$ref"].startswith("#/$defs/"):
                return walk(dict(defs[node["$ref"].rsplit("/", 1)[1]]))
            any_of = node.get("anyOf")
            if isinstance(any_of, list):
                rest = [s for s in any_of if s != {"type": "null"}]
                if len(rest) == 1 and len(rest) < len(any_of):
                    merged = {k: v for k, v in node.items() if k != "anyOf"}
                    merged.update(rest[0])
                    node = merged
            # "title" is pydantic's metadata everywhere except as a key of `properties`,
            # where it is an argument's name (kanban_create's title).
            out = {
                k: (
                    {n: walk(p) for n, p in v.items()}
                    if k == "properties" and isinstance(v, dict)
                    else walk(v)
                )
                for k, v in node.items()
                if k != "title"
            }
            if isinstance(out.get("properties"), dict):
                # An object, at any depth: unknown keys are refused by name at call
                # time, so `additionalProperties` is only bytes; a None default is the
                # same as leaving the field out.
                out.pop("additionalProperties", None)
                for prop in out["properties"].values():
                    if isinstance(prop, dict) and prop.get("default", 0) is None:
                        prop.pop("default")
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    cleaned = walk(schema)
    cleaned.pop("additionalProperties", None)
    cleaned.setdefault("properties", {})
    return cleaned


__all__ = ["Flag", "tool"]
