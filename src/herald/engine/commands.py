"""The slash commands every surface shares: one registry of names, usage and help.

Surfaces (the CLI REPL, the gateway) implement what a command does; this table
decides which commands exist, how they are spelled, and whether they may run
while a turn is in progress, so `/help` reads the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandSpec:
    name: str
    usage: str
    help: str
    while_busy: bool = False  # may run while a turn is in progress
    surfaces: frozenset[str] = frozenset({"cli", "gateway"})


COMMANDS: dict[str, CommandSpec] = {
    c.name: c
    for c in (
        CommandSpec("help", "/help", "list commands", while_busy=True),
        CommandSpec("new", "/new", "start a new session"),
        CommandSpec("stop", "/stop", "interrupt the running turn", while_busy=True),
        CommandSpec("steer", "/steer TEXT", "redirect the running turn", while_busy=True),
        CommandSpec("compress", "/compress [TOPIC]", "summarize older messages now"),
        CommandSpec("usage", "/usage", "tokens, cache hits and cost so far", while_busy=True),
        CommandSpec("model", "/model [NAME]", "show or switch the model"),
        CommandSpec(
            "agents",
            "/agents [steer ID TEXT|stop ID|pause|resume]",
            "sub-agents: status and cost, steer or stop one, pause new spawns",
            while_busy=True,
        ),
        CommandSpec(
            "kanban",
            "/kanban [approve ID|reject ID WHY|unblock ID]",
            "board tasks waiting for you; answer one",
            while_busy=True,
        ),
        CommandSpec(
            "rollback",
            "/rollback [list|N] [PATH]",
            "undo file changes: restore the newest checkpoint (again: undo that)",
        ),
        CommandSpec(
            "approve",
            "/approve [session|always]",
            "allow the command waiting for approval",
            while_busy=True,
            surfaces=frozenset({"gateway"}),
        ),
        CommandSpec(
            "deny",
            "/deny",
            "refuse the command waiting for approval",
            while_busy=True,
            surfaces=frozenset({"gateway"}),
        ),
        CommandSpec(
            "image",
            "/image PATH",
            "attach an image to your next message",
            surfaces=frozenset({"cli"}),
        ),
        CommandSpec("exit", "/exit", "leave Herald", while_busy=True, surfaces=frozenset({"cli"})),
    )
}


def parse_command(text: str) -> tuple[str, str] | None:
    """(name, argument) for a slash command, else None. `/cmd@botname` (Telegram's
    group form) is accepted."""
    stripped = text.strip()
    if not stripped.startswith("/") or len(stripped) < 2:
        return None
    head, _, arg = stripped[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    return (name, arg.strip()) if name else None


def commands_for(surface: str) -> list[CommandSpec]:
    return [c for c in COMMANDS.values() if surface in c.surfaces]


def help_lines(surface: str) -> list[str]:
    return [f"{c.usage:<26} {c.help}" for c in commands_for(surface)]
