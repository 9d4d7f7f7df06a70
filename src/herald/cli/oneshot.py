"""`herald chat -q TEXT`: one turn; the answer on stdout, everything else on stderr."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from herald.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TURN_FAILED,
    err_console,
    fail,
    open_store,
    resolve_session_id,
    write_stdout,
)
from herald.cli.interaction import HumanChannel, install
from herald.cli.turns import build_agent, expand_skill_command, run_turn_interruptibly

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.engine import TurnResult


def _status_callbacks():
    from herald.engine import TurnCallbacks

    console = err_console()

    def on_status(message: str) -> None:
        console.print(f"· {message}", style="dim", highlight=False)

    def on_tool_start(name: str, _arguments: str) -> None:
        console.print(f"· running {name}", style="dim", highlight=False)

    def on_learning(notice: str) -> None:
        console.print(f"· learned: {notice}", style="dim", highlight=False)

    return TurnCallbacks(on_status=on_status, on_tool_start=on_tool_start, on_learning=on_learning)


def exit_code_for(result: TurnResult) -> int:
    from herald.engine import ExitReason

    if result.completed:
        return EXIT_OK
    if result.exit_reason in (
        ExitReason.INTERRUPTED_BY_USER,
        ExitReason.INTERRUPTED_DURING_API_CALL,
    ):
        return EXIT_INTERRUPTED
    return EXIT_TURN_FAILED


def run_oneshot(
    settings: Settings,
    query: str,
    *,
    as_json: bool = False,
    resume: str | None = None,
    max_turns: int | None = None,
) -> int:
    from herald.engine import AgentOptions
    from herald.safety import redact

    if not query.strip():
        fail("the query is empty: pass the text to send, e.g. herald chat -q \"Say hello\"")
    query = expand_skill_command(settings, query, ()) or query
    with open_store(settings) as store:
        session_id = resolve_session_id(store, resume)
        agent = build_agent(
            settings,
            store,
            session_id=session_id,
            options=AgentOptions(source="cli", platform="cli", max_turns=max_turns),
            callbacks=_status_callbacks(),
        )
        if sys.stdin.isatty():  # a person at the terminal can approve and answer
            channel = HumanChannel(
                lambda text: err_console().print(text, highlight=False), read_stdin=True
            )
            install(agent.tool_context, channel, approval_timeout=settings.config.approvals.timeout_seconds)
        try:
            result = run_turn_interruptibly(agent, query)
        finally:
            agent.close()
    if as_json:
        write_stdout(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n")
    elif result.final_text:
        write_stdout(result.final_text.rstrip() + "\n")
    if not result.completed:
        why = result.error or result.exit_reason.value.replace("_", " ")
        err_console().print(
            f"turn ended: {result.exit_reason.value} — {redact(why)}",
            style="red",
            highlight=False,
        )
    err_console().print(f"session {result.session_id}", style="dim", highlight=False)
    return exit_code_for(result)
