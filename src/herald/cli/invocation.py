"""How the command line reaches the command tree: global options anywhere, tidy help.

- ``--profile NAME`` is a global option of the root command. People type it where
  they think of it, after the subcommand too (``herald sessions list --profile
  work``), so it is moved in front of the subcommand before parsing.
- The help renderer shows every option's type in angle brackets, which for a flag
  reads ``--json <bool>`` (as if it took a value). Flags get no placeholder and
  options that take a value are shown with their name (``--source SOURCE``).
"""

from __future__ import annotations

from typing import Any

GLOBAL_VALUE_OPTIONS = ("--profile", "-p")


def hoist_global_options(argv: list[str]) -> list[str]:
    """``argv`` (without the program name) with the global options moved to the front.
    Tokens after ``--`` are left alone."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            rest.extend(argv[i:])
            break
        if token in GLOBAL_VALUE_OPTIONS and i + 1 < len(argv):
            front += [token, argv[i + 1]]
            i += 2
            continue
        if token.startswith("--profile="):
            front.append(token)
        else:
            rest.append(token)
        i += 1
    return front + rest


def tidy_help(command: Any) -> None:
    """Placeholders that read right: none for flags, the option's name for a value."""
    import typer

    options = list(getattr(command, "params", []))
    help_option = command.get_help_option(typer.Context(command))
    if help_option is not None:
        options.append(help_option)
    for param in options:
        if getattr(param, "param_type_name", "") != "option":
            continue
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif param.metavar is None and param.name:
            param.metavar = param.name.upper()
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)
