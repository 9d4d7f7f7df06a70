"""`herald chat -q TEXT`: one turn; the answer on stdout, everything else on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
from herald.cli.interaction import HumanChannel, humans_for
from herald.cli.startup import resume_collection
from herald.cli.turns import build_agent, expand_skill_command, wait_interruptibly

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.engine import TurnResult


# The terminal tool's answer when no human could approve (herald.tools.terminal_approval).
_NOBODY_TO_APPROVE = "no one can approve it here"


def _status_callbacks(*, attended: bool):
    from herald.engine import TurnCallbacks

    console = err_console()
    commands: dict[str, str] = {}

    def say(message: str, style: str = "dim") -> None:
        console.print(message, style=style, markup=False, highlight=False)

    def on_tool_start(name: str, arguments: str) -> None:
        say(f"· running {name}")
        commands[name] = _command_of(arguments)

    def on_tool_end(name: str, result: str, _is_error: bool) -> None:
        if attended or _NOBODY_TO_APPROVE not in result:
            return
        what = commands.get(name) or name
        say(
            f"refused: {what!s} is not known read-only and nobody is at a terminal to "
            "approve it (stdin is not a terminal).",
            "yellow",
        )
        say(
            "  To be asked, run herald chat -q from a terminal; to allow such commands "
            "unattended, add a pattern (e.g. 'make test') to approvals.unattended_allow "
            "in config.yaml.",
            "yellow",
        )

    return TurnCallbacks(
        on_status=lambda message: say(f"· {message}"),
        on_tool_start=on_tool_start,
        on_tool_end=on_tool_end,
        on_learning=lambda notice: say(f"· learned: {notice}"),
    )


def _command_of(arguments: str) -> str:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return ""
    command = value.get("command") if isinstance(value, dict) else None
    return command if isinstance(command, str) else ""


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


def attach_images(agent: Any, paths: Sequence[str]) -> list[Any]:
    """The images for a turn, each stored under the home; a bad one ends the command with
    what is wrong with it (before anything is sent)."""
    from herald.providers.images import ImageError

    refs = []
    for path in paths:
        try:
            refs.append(agent.attach_image(path))
        except ImageError as exc:
            fail(f"cannot attach {path}: {exc}")
    return refs


def run_oneshot(
    settings: Settings,
    query: str,
    *,
    as_json: bool = False,
    resume: str | None = None,
    max_iterations: int | None = None,
    images: Sequence[str] = (),
    audio: str | None = None,
    speech_out: str | None = None,
) -> int:
    from herald.engine import AgentOptions
    from herald.providers.voice import should_speak
    from herald.safety import redact

    if audio is not None:
        from herald.cli.voice_io import query_with_voice_note

        query = query_with_voice_note(settings, query.strip() or None, audio)
    if not query.strip():
        fail('the query is empty: pass the text to send, e.g. herald chat -q "Say hello"')
    query = expand_skill_command(settings, query, ()) or query
    with open_store(settings) as store:
        session_id = resolve_session_id(store, resume)
        attended = sys.stdin.isatty()  # a person at the terminal can approve and answer
        agent = build_agent(
            settings,
            store,
            session_id=session_id,
            options=AgentOptions(source="cli", max_iterations=max_iterations),
            # Notices from outside a turn (an unknown context window at start-up).
            callbacks=_status_callbacks(attended=attended),
        )
        channel = HumanChannel(
            lambda text: err_console().print(text, markup=False, highlight=False),
            read_stdin=True,
        )
        humans = (
            humans_for(channel, approval_timeout=settings.config.approvals.timeout_seconds)
            if attended
            else None
        )
        try:
            attached = attach_images(agent, images)
            resume_collection()  # the process's start-up is over (see herald.cli.startup)
            handle = agent.start_turn(
                query,
                callbacks=_status_callbacks(attended=attended),
                humans=humans,
                images=attached,
            )
            channel.turn = handle
            result = wait_interruptibly(handle)
        finally:
            agent.close()
    if exit_code_for(result) == EXIT_INTERRUPTED:
        kept = (
            f"the session is kept: herald chat -r {result.session_id}"
            if result.session_id
            else "nothing was stored"
        )
        err_console().print(
            f"interrupted; {kept}",
            style="yellow",
            markup=False,
            highlight=False,
        )
        return EXIT_INTERRUPTED
    if as_json:
        write_stdout(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n")
    elif result.final_text:
        write_stdout(result.final_text.rstrip() + "\n")
    if result.final_text and should_speak(settings.config, heard_voice=audio is not None):
        from herald.cli.voice_io import speak_reply

        speak_reply(settings, result.final_text, speech_out)
    if not result.completed:
        why = result.error or result.exit_reason.value.replace("_", " ")
        err_console().print(
            f"turn ended: {result.exit_reason.value} — {redact(why)}",
            style="red",
            markup=False,
            highlight=False,
        )
    if result.session_id:
        err_console().print(f"session {result.session_id}", style="dim", highlight=False)
    else:
        err_console().print(
            "nothing was stored: the turn ended before its session could be saved",
            style="red",
            markup=False,
            highlight=False,
        )
    return exit_code_for(result)
