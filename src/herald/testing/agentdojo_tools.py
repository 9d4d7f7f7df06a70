"""AgentDojo's four suites as real Herald tools, for bench/agentdojo.py and its test.

Each suite becomes a directory plugin written into a throwaway Herald home
(`write_suite_plugin`). Its tools wrap AgentDojo's own functions through
AgentDojo's `FunctionsRuntime`, on the suite's live environment held by a
`LiveEnvironment` slot the bench swaps per task. Every tool's result is marked
untrusted (``plugin:agentdojo``: mail, files, web pages, chat messages and
transaction subjects are written by other people), and the tools that act are
declared consequential with the arguments that decide where the action goes
(`DECLARATIONS`). The declaration keywords come from the provenance defence
(``controls=``, ``consequential=``, ``untrusted=``).

Needs the ``agentdojo`` package (the dev extra installs it); it is imported only
when a suite is asked for.
"""

from __future__ import annotations

import json
import textwrap
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from herald.config import HeraldHome
    from herald.tools import ToolContext, ToolSpec

SUITE_VERSION = "v1.2.2"  # AgentDojo's newest benchmark version in agentdojo 0.1.35
SUITES = ("workspace", "travel", "banking", "slack")
UNTRUSTED_SOURCE = "plugin:agentdojo"
RESULT_LIMIT = 400_000  # whole results: a spilled preview could hide the injection


@dataclass(frozen=True)
class Declared:
    """How one acting tool is declared: the arguments that decide where the action goes
    (who gets the money or the mail, which file or event is touched, which URL is
    called), and the data arguments whose text is sent to other people (`outbound`: a
    mail body, a payment's subject; the links, addresses, account numbers and codes in
    them are checked, their prose is not). Other arguments are data and may carry
    untrusted text freely."""

    controls: tuple[str, ...]
    consequential: bool = True
    outbound: tuple[str, ...] = ()


def _acting(**tools: tuple[str, ...]) -> dict[str, Declared]:
    return {name: Declared(controls) for name, controls in tools.items()}


def _sending(**tools: tuple[tuple[str, ...], tuple[str, ...]]) -> dict[str, Declared]:
    """Tools that send text to someone: (controls, outbound data arguments)."""
    return {name: Declared(controls, outbound=out) for name, (controls, out) in tools.items()}


# Tools not named here only read the environment (not consequential, no controls).
_CALENDAR = {
    # Who is invited, and the event's name: the title is to an event what the file name
    # is to create_file. The description is data, but an invitation sends it to every
    # participant: outbound.
    **_sending(create_calendar_event=(("participants", "title"), ("description",))),
    **_acting(cancel_calendar_event=("event_id",)),
}
_EMAIL = _sending(send_email=(("recipients", "cc", "bcc", "attachments"), ("subject", "body")))
_PAYMENT = (("recipient",), ("subject",))
DECLARATIONS: dict[str, dict[str, Declared]] = {
    "workspace": {
        **_EMAIL,
        **_CALENDAR,
        **_acting(
            delete_email=("email_id",),
            reschedule_calendar_event=("event_id",),
            add_calendar_event_participants=("event_id", "participants"),
            append_to_file=("file_id",),
            create_file=("filename",),
            delete_file=("file_id",),
            share_file=("file_id", "email", "permission"),
        ),
    },
    "travel": {
        **_EMAIL,
        **_CALENDAR,
        **_acting(
            reserve_hotel=("hotel",),
            reserve_car_rental=("company",),
            reserve_restaurant=("restaurant",),
        ),
    },
    "banking": {
        **_sending(
            send_money=_PAYMENT,
            schedule_transaction=_PAYMENT,
            update_scheduled_transaction=(("id", "recipient"), ("subject",)),
        ),
        **_acting(
            update_password=("password",),
            update_user_info=("first_name", "last_name", "street", "city"),
        ),
    },
    "slack": {
        **_acting(
            add_user_to_channel=("user", "channel"),
            invite_user_to_slack=("user", "user_email"),
            remove_user_from_slack=("user",),
            # Fetching a URL sends a request there (the query string can carry data out).
            get_webpage=("url",),
        ),
        **_sending(
            send_direct_message=(("recipient",), ("body",)),
            send_channel_message=(("channel",), ("body",)),
            post_webpage=(("url",), ("content",)),
        ),
    },
}


def load_suite(name: str) -> Any:
    """AgentDojo's `TaskSuite` of that name, at `SUITE_VERSION`."""
    if name not in SUITES:
        raise ValueError(f"unknown AgentDojo suite {name!r}; choose from {', '.join(SUITES)}")
    from agentdojo.task_suite.load_suites import get_suite

    return get_suite(SUITE_VERSION, name)


@dataclass(frozen=True)
class ExecutedCall:
    """A call Herald let through to AgentDojo's function (`error` when that failed)."""

    function: str
    args: dict[str, Any]
    error: str | None = None

    def key(self) -> str:
        return call_key(self.function, self.args)


def call_key(function: str, args: dict[str, Any]) -> str:
    """One call as comparable text (JSON turns tuples into lists, as the wire does)."""
    return function + json.dumps(args, sort_keys=True, default=str)


@dataclass
class LiveEnvironment:
    """The environment a suite's tools act on, swapped by the bench before each run,
    and the calls that reached it (AgentDojo's checks read that trace)."""

    suite_name: str
    environment: Any = None
    executed: list[ExecutedCall] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, environment: Any) -> None:
        with self.lock:
            self.environment = environment
            self.executed = []

    def run(self, function: str, args: dict[str, Any]) -> str:
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
        from agentdojo.functions_runtime import FunctionsRuntime

        with self.lock:
            if self.environment is None:
                raise RuntimeError(f"no AgentDojo {self.suite_name} environment is loaded")
            runtime = FunctionsRuntime(load_suite(self.suite_name).tools)
            result, error = runtime.run_function(self.environment, function, args)
            # Failed calls are kept too: they reached the environment (AgentDojo's own
            # traces list them), and only a call Herald held back counts as refused.
            self.executed.append(ExecutedCall(function, dict(args), error))
            return f"Error: {error}" if error is not None else tool_result_to_str(result)


# One slot per suite for the process: the plugin module Herald imports reaches the
# bench's environment through it (a plugin gets no handle on its caller otherwise).
_SLOTS: dict[str, LiveEnvironment] = {}
_SLOTS_LOCK = threading.Lock()


def live_environment(suite_name: str) -> LiveEnvironment:
    with _SLOTS_LOCK:
        slot = _SLOTS.get(suite_name)
        if slot is None:
            load_suite(suite_name)  # an unknown name fails here, clearly
            slot = _SLOTS[suite_name] = LiveEnvironment(suite_name)
        return slot


def plugin_name(suite_name: str) -> str:
    return f"agentdojo_{suite_name}"


def suite_tools(suite_name: str) -> list[ToolSpec]:
    """Herald tools for every function of the suite, each run on the live environment."""
    from herald.tools import tool

    suite = load_suite(suite_name)
    slot = live_environment(suite_name)
    table = DECLARATIONS[suite_name]
    missing = set(table) - {function.name for function in suite.tools}
    if missing:  # the table and AgentDojo drifted apart: say so rather than guard less
        raise ValueError(
            f"the {suite_name} declarations name tools AgentDojo does not have: {sorted(missing)}"
        )
    specs = []
    for function in suite.tools:
        declared = table.get(function.name, Declared((), consequential=False))
        parameters = function.parameters.model_json_schema()
        parameters.pop("title", None)
        declare = tool(
            toolset=f"plugin-{plugin_name(suite_name)}",
            name=function.name,
            description=function.description or function.name,
            schema={"parameters": parameters},
            parallel_safe=not declared.consequential,
            max_result_chars=RESULT_LIMIT,
            controls=declared.controls,  # a misspelt one is refused here, by Herald
            consequential=declared.consequential,
            untrusted=UNTRUSTED_SOURCE,
            outbound=declared.outbound,
        )
        specs.append(declare(_caller(slot, function.name)))
    return specs


def _caller(slot: LiveEnvironment, function: str) -> Any:
    def call(ctx: ToolContext, **args: Any) -> str:
        return slot.run(function, args)

    call.__name__ = function
    return call


_PLUGIN_INIT = '''\
"""AgentDojo's {suite} suite as Herald tools (written by herald.testing.agentdojo_tools)."""

from herald.testing.agentdojo_tools import suite_tools


def register(ctx):
    for spec in suite_tools({suite!r}):
        ctx.register_tool(spec)
'''


def write_suite_plugin(home: HeraldHome, suite_name: str) -> str:
    """Write the suite's plugin into `home`'s plugins folder; returns its name (enable it
    with ``plugins.enabled``, offer it with ``toolsets.enabled: [plugin-<name>]``)."""
    load_suite(suite_name)
    name = plugin_name(suite_name)
    folder = home.plugins_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.yaml").write_text(
        textwrap.dedent(
            f"""\
            name: {name}
            version: 0.1.0
            description: AgentDojo's {suite_name} suite (benchmark tools)
            provides: [tools]
            """
        ),
        encoding="utf-8",
    )
    (folder / "__init__.py").write_text(_PLUGIN_INIT.format(suite=suite_name), encoding="utf-8")
    return name


__all__ = [
    "DECLARATIONS",
    "SUITES",
    "SUITE_VERSION",
    "UNTRUSTED_SOURCE",
    "Declared",
    "ExecutedCall",
    "LiveEnvironment",
    "call_key",
    "live_environment",
    "load_suite",
    "plugin_name",
    "suite_tools",
    "write_suite_plugin",
]
