"""Per-call refinements of ``consequential`` for the built-in tools (`ToolSpec.consequence`).

A tool declared consequential is checked by the taint rule (herald.safety.taint) before
every call unless its predicate says this call changes nothing outside the session:

- file writes: a path under the Herald home's ``cache/`` folder (the session scratch
  Herald spills long results into) is not consequential; every other path is;
- terminal: a command known to be read-only (herald.safety.is_read_only) is not;
- web_extract: a plain GET of a URL without a query string, fragment or user info is a
  read; a URL that carries one sends data to the server and is consequential (a URL path
  can carry data too: that is a documented limit);
- action tools: only the actions that create or change something (memory add/replace,
  skill create/patch/edit, cron create, delegation run/steer, process write).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from herald.tools.registry import ToolContext

Predicate = Callable[[dict[str, Any], ToolContext], bool]


def path_outside_scratch(argument: str = "path") -> Predicate:
    def consequential(args: dict[str, Any], ctx: ToolContext) -> bool:
        path = str(args.get(argument) or "")
        if ctx.home is None or not path.startswith("/"):
            return True
        scratch = str(ctx.home.root / "cache")
        normal = posixpath.normpath(path)
        return not (normal == scratch or normal.startswith(scratch + "/"))

    return consequential


def command_not_read_only(args: dict[str, Any], ctx: ToolContext) -> bool:
    from herald.safety import is_read_only

    return not is_read_only(str(args.get("command") or ""))


def url_sends_data(args: dict[str, Any], ctx: ToolContext) -> bool:
    try:
        parts = urlsplit(str(args.get("url") or "").strip())
    except ValueError:
        return True
    return bool(parts.query or parts.fragment or parts.username or parts.password)


def actions(*names: str) -> Predicate:
    """Consequential only for these values of the ``action`` argument."""
    wanted = frozenset(names)

    def consequential(args: dict[str, Any], ctx: ToolContext) -> bool:
        return str(args.get("action") or "").strip().lower() in wanted

    return consequential


__all__ = ["actions", "command_not_read_only", "path_outside_scratch", "url_sends_data"]
