"""`/agents`: the text of the slash command every surface shares (the CLI REPL and the
gateway call `agents_command` with the session's id and the argument)."""

from __future__ import annotations

from herald.delegation.board import board

USAGE = "usage: /agents [steer ID TEXT | stop ID | pause | resume]"


def agents_command(session_id: str | None, arg: str) -> str:
    """List the session's sub-agents, or steer / stop one, or pause / resume spawning."""
    if session_id is None:
        return "No sub-agents: this session has not started yet."
    verb, _, rest = arg.strip().partition(" ")
    verb = verb.lower()
    if verb in ("", "list"):
        children = board.children(session_id)
        lines = [c.line() for c in children] or ["No sub-agents in this session."]
        total = sum(c.cost_usd for c in children)
        if children and total:
            lines.append(f"total cost ${total:.4f}")
        if board.paused(session_id):
            lines.append("spawning is paused (/agents resume)")
        return "\n".join(lines)
    if verb in ("pause", "resume"):
        board.pause(session_id, verb == "pause")
        return (
            "Paused: no new sub-agents start in this session (running ones go on)."
            if verb == "pause"
            else "Resumed: sub-agents may start again."
        )
    if verb in ("steer", "stop"):
        child_id, _, text = rest.strip().partition(" ")
        if not child_id or (verb == "steer" and not text.strip()):
            return USAGE
        child = board.find(session_id, child_id)
        if child is None:
            return f"No sub-agent {child_id} in this session; /agents lists them."
        if verb == "stop":
            return f"Stopping {child.label}." if child.stop() else f"{child.label} already ended."
        if child.steer(text.strip()):
            return f"↪ Passed to {child.label}; it sees it after its current step."
        return f"{child.label} is not running; nothing was sent."
    return USAGE


__all__ = ["USAGE", "agents_command"]
