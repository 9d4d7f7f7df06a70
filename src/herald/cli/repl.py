"""The interactive REPL (`herald` / `herald chat`).

The prompt stays live while a turn runs (the turn has its own thread), so the
user can `/stop` or `/steer` it; Ctrl-C during a turn interrupts the turn,
Ctrl-C twice at an empty prompt leaves. Replies stream as they arrive.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from herald.cli.common import err_console
from herald.cli.interaction import HumanChannel
from herald.cli.stream_view import StreamView
from herald.cli.turns import build_agent, expand_skill_command
from herald.engine.commands import commands_for, help_lines, parse_command

if TYPE_CHECKING:
    from collections.abc import Callable

    from herald.config import Settings
    from herald.engine import Agent, TurnCallbacks, TurnHandle, TurnResult
    from herald.state import StateStore

PROMPT = "› "


class Repl:
    def __init__(
        self,
        settings: Settings,
        store: StateStore,
        *,
        resume: str | None = None,
        max_iterations: int | None = None,
    ):
        self.settings = settings
        self.store = store
        self.max_iterations = max_iterations
        self.console = err_console()
        self.channel = HumanChannel(self._ask)
        self.view = StreamView(self._write)
        self.agent = self._new_agent(resume)
        self.turn: TurnHandle | None = None
        self.watcher: threading.Thread | None = None
        self.queued: list[str] = []
        self.images: list[Any] = []  # attached with /image, sent with the next message
        self.should_exit = False

    # ---- agent & turns ------------------------------------------------------------------

    def _new_agent(self, session_id: str | None) -> Agent:
        from herald.engine import AgentOptions

        return build_agent(
            self.settings,
            self.store,
            session_id=session_id,
            options=AgentOptions(source="cli", max_iterations=self.max_iterations),
            callbacks=self._callbacks(),  # for what happens between turns (/compress)
        )

    def _callbacks(self) -> TurnCallbacks:
        from herald.engine import TurnCallbacks

        return TurnCallbacks(
            on_text_delta=self.view.feed,
            on_tool_start=lambda name, _args: self._status(f"running {name}"),
            on_status=self._status,
            on_learning=lambda notice: self._status(f"learned: {notice}"),
            on_stream_discard=self._discard_partial,
        )

    def _ask(self, text: str) -> None:
        self._print(text, style="bold yellow")

    def _print(self, text: str, *, style: str | None = None) -> None:
        """A line that is not reply text (markup off: it may hold commands, paths, […])."""
        self.view.end_line()
        self.console.print(text, style=style, markup=False, highlight=False)
        self.view.note_rows(text)

    @property
    def busy(self) -> bool:
        """A turn runs, or its reply is still being written out."""
        return (self.turn is not None and not self.turn.done) or (
            self.watcher is not None and self.watcher.is_alive()
        )

    def _write(self, text: str) -> None:
        import sys

        sys.stdout.write(text)
        sys.stdout.flush()

    def _status(self, message: str) -> None:
        self._print(f"· {message}", style="dim")

    def _discard_partial(self) -> None:
        """The model call is being retried: its half-streamed text is not the answer."""
        for note in self.view.discard():
            self._print(note, style="dim")

    def start_turn(self, text: str) -> None:
        from herald.cli.interaction import humans_for

        self.view.reset()
        humans = humans_for(
            self.channel, approval_timeout=self.settings.config.approvals.timeout_seconds
        )
        images, self.images = self.images, []
        self.turn = self.agent.start_turn(
            text, callbacks=self._callbacks(), humans=humans, images=images
        )
        self.channel.turn = self.turn
        turn = self.turn

        def watch() -> None:
            try:
                result = turn.result()
            except Exception as exc:  # keep the REPL alive whatever happens
                self._print(f"turn failed: {exc}", style="red")
                return
            self._after_turn(result)

        self.watcher = threading.Thread(target=watch, name="herald-turn-watch", daemon=True)
        self.watcher.start()

    def _after_turn(self, result: TurnResult) -> None:
        from herald.safety import redact

        if self.view.wrote_text:
            self.view.end_line()
        elif result.final_text:
            self._write(result.final_text.rstrip() + "\n")
        if not result.completed:
            why = result.error or result.exit_reason.value.replace("_", " ")
            self._print(f"turn ended: {redact(why)}", style="yellow")
        if result.leftover_steer:
            self.queued.insert(0, result.leftover_steer)
        if self.queued:
            self.start_turn(self.queued.pop(0))

    def wait_for_turn(self) -> None:
        while self.busy:
            assert self.turn is not None
            if self.turn.wait(0.1) and self.watcher is not None:
                self.watcher.join(0.1)

    # ---- input ----------------------------------------------------------------------------

    def handle_line(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        if (
            self.channel.pending
            and text.lower() not in ("/stop", "/exit")
            and not text.lower().startswith("/agents")  # see who asks before answering
        ):
            self.channel.answer(text)  # the running turn asked a question
            return
        parsed = parse_command(text)
        if parsed is not None:
            name, arg = parsed
            command = COMMANDS.get(name)
            if command is None and self._plugin_command(name, arg):
                return
            if command is None:
                expanded = expand_skill_command(self.settings, text, tuple(COMMANDS))
                if expanded is not None:
                    self.handle_line(expanded)
                    return
                self._print(f"unknown command /{name}; /help lists them", style="yellow")
                return
            if self.busy and not command.while_busy:
                self._print(
                    f"/{command.name} cannot run during a turn; /stop it first",
                    style="yellow",
                )
                return
            HANDLERS[command.name](self, arg)
            return
        if self.busy:
            self.queued.append(text)
            self._status("queued; it runs when this turn ends (/steer to redirect it now)")
            return
        self.start_turn(text)

    def _plugins(self):
        from herald.plugins import plugins_for

        return plugins_for(
            self.settings.config, self.settings.home, self.settings.secrets, cwd=os.getcwd()
        )

    def _plugin_command(self, name: str, arg: str) -> bool:
        """A plugin's ``/name``: answered here (True), or no plugin has it (False)."""
        from herald.plugins.slash import answer_slash_command

        answer = answer_slash_command(
            self._plugins(), name, arg, session_id=self.agent.session_id, surface="cli"
        )
        if answer is None:
            return False
        self._print(answer)
        return True

    def on_ctrl_c(self) -> bool:
        """True when the REPL should leave (a second Ctrl-C at an idle, empty prompt)."""
        if self.busy:
            assert self.turn is not None
            self.turn.interrupt()
            self._status("interrupting the turn…")
            return False
        return True

    def run(self) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import WordCompleter
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.patch_stdout import patch_stdout

        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event) -> None:  # Alt-Enter inserts a newline
            event.current_buffer.insert_text("\n")

        @bindings.add("c-c")
        def _ctrl_c(event) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt)

        history_path = self.settings.home.history_file
        history_path.parent.mkdir(parents=True, exist_ok=True)
        session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history_path)),
            completer=WordCompleter([f"/{n}" for n in COMMANDS], sentence=True),
            key_bindings=bindings,
        )
        provider, model = self.agent.client.identity()
        self._print(
            f"Herald — {provider}:{model}. /help for commands, Alt-Enter for a newline.",
            style="bold",
        )
        pending_exit = False
        with patch_stdout(raw=True):
            while not self.should_exit:
                try:
                    line = session.prompt(PROMPT)
                except KeyboardInterrupt:
                    if not self.on_ctrl_c():
                        pending_exit = False
                        continue
                    if pending_exit:
                        break
                    pending_exit = True
                    self._status("press Ctrl-C again to exit")
                    continue
                except EOFError:
                    break
                pending_exit = False
                self.handle_line(line)
        if self.busy:
            assert self.turn is not None
            self.turn.interrupt()
        self.wait_for_turn()
        self.agent.close()


# ---- slash commands ------------------------------------------------------------------------


def _cmd_help(repl: Repl, _arg: str) -> None:
    from herald.plugins.slash import slash_help_lines

    for line in help_lines("cli") + slash_help_lines(repl._plugins()):
        repl._print(f"  {line}")


def _cmd_exit(repl: Repl, _arg: str) -> None:
    repl.should_exit = True


def _cmd_new(repl: Repl, _arg: str) -> None:
    repl.agent.close()
    repl.agent = repl._new_agent(None)
    repl._status("started a new session")


def _cmd_stop(repl: Repl, _arg: str) -> None:
    if repl.busy:
        repl.queued.clear()
        assert repl.turn is not None
        repl.turn.interrupt()
        repl._status("stopping the turn…")
    else:
        repl._status("no turn is running")


def _cmd_steer(repl: Repl, arg: str) -> None:
    if not arg:
        repl._status("usage: /steer TEXT")
        return
    if repl.busy:
        assert repl.turn is not None
        repl.turn.steer(arg)
        repl._status("steer queued; the model sees it after the current tool")
    else:
        repl.start_turn(arg)


def _cmd_usage(repl: Repl, _arg: str) -> None:
    from herald.state.reports import local_day_start, session_usage

    if repl.agent.session_id is None:
        repl._status("no messages yet in this session")
        return
    report = repl.store.report(session_usage, repl.agent.session_id, today=local_day_start())
    for line in report.lines():
        repl._print(f"  {line}")


def _cmd_compress(repl: Repl, arg: str) -> None:
    if repl.agent.transcript is None:
        repl._status("nothing to compress yet")
        return
    if not repl.agent.compress_now(focus=arg or None):
        repl._status("nothing to compress: the conversation is already short")


def _cmd_model(repl: Repl, arg: str) -> None:
    provider, model = repl.agent.client.identity()
    if not arg:
        repl._print(f"  {provider}:{model}")
        return
    from herald.config import MissingSecretError
    from herald.providers import ModelClient, ProviderConfigError

    previous = repl.settings.config.model.name
    repl.settings.config.model.name = arg
    try:
        client = ModelClient(repl.settings.config, repl.settings.secrets, repl.settings.home)
    except (ProviderConfigError, MissingSecretError) as exc:
        repl.settings.config.model.name = previous
        repl._print(f"cannot switch: {exc}", style="red")
        return
    repl.agent.switch_model(client)
    new_provider, new_model = repl.agent.client.identity()
    repl._status(f"now using {new_provider}:{new_model}")


def _cmd_agents(repl: Repl, arg: str) -> None:
    from herald.delegation import agents_command

    for line in agents_command(repl.agent.session_id, arg).splitlines():
        repl._print(f"  {line}")


def _cmd_kanban(repl: Repl, arg: str) -> None:
    from herald.kanban.chat import kanban_command

    for line in kanban_command(repl.settings, arg).splitlines():
        repl._print(f"  {line}")


def _cmd_image(repl: Repl, arg: str) -> None:
    from herald.providers.images import ImageError

    if not arg:
        repl._status("usage: /image PATH (the image goes with your next message)")
        return
    try:
        ref = repl.agent.attach_image(arg.strip())
    except ImageError as exc:
        repl._print(f"cannot attach {arg.strip()}: {exc}", style="red")
        return
    repl.images.append(ref)
    repl._status(f"attached {ref.name} ({ref.width}×{ref.height}); it goes with your next message")


def _cmd_rollback(repl: Repl, arg: str) -> None:
    from herald.checkpoints import rollback_command

    for line in rollback_command(repl.agent.checkpoints, arg).splitlines():
        repl._print(f"  {line}")


HANDLERS: dict[str, Callable[[Repl, str], None]] = {
    "help": _cmd_help,
    "new": _cmd_new,
    "steer": _cmd_steer,
    "stop": _cmd_stop,
    "usage": _cmd_usage,
    "compress": _cmd_compress,
    "model": _cmd_model,
    "agents": _cmd_agents,
    "kanban": _cmd_kanban,
    "rollback": _cmd_rollback,
    "image": _cmd_image,
    "exit": _cmd_exit,
}
COMMANDS = {c.name: c for c in commands_for("cli")}
assert set(HANDLERS) == set(COMMANDS), "every shared CLI command needs a handler"
