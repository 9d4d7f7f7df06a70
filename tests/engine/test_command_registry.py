"""The shared slash-command registry."""

from __future__ import annotations

from herald.engine.commands import COMMANDS, commands_for, help_lines, parse_command


def test_parse_command_forms():
    assert parse_command("/new") == ("new", "")
    assert parse_command("  /steer  go left ") == ("steer", "go left")
    assert parse_command("/stop@herald_bot") == ("stop", "")
    assert parse_command("/Compress The DB") == ("compress", "The DB")
    for not_a_command in ("hello", "", "/", "path/to/file", " / x"):
        assert parse_command(not_a_command) is None


def test_surfaces_see_their_commands():
    cli = {c.name for c in commands_for("cli")}
    gateway = {c.name for c in commands_for("gateway")}
    assert {
        "new",
        "stop",
        "steer",
        "compress",
        "usage",
        "model",
        "help",
        "rollback",
    } <= cli & gateway
    assert "exit" in cli and "exit" not in gateway
    assert {"approve", "deny"} <= gateway and not {"approve", "deny"} & cli
    assert all(COMMANDS[n].while_busy for n in ("stop", "steer", "approve", "deny"))
    assert any(line.startswith("/approve") for line in help_lines("gateway"))
