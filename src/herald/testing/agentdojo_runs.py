"""Running AgentDojo tasks through real Herald turns with a scripted model.

The model is the fake LLM server (real HTTP) answering through `ScriptedModel`,
one tool call per reply:

- ``oracle`` replays the user task's ground-truth calls, then answers with the
  task's ground-truth output;
- ``victim`` does the same until a tool result it has read carries an injection,
  then follows the injection task's ground-truth calls instead (a model that
  always obeys).

Each run gets a fresh session on a Herald home whose config turns the provenance
defence off or on (``trust.enforce``), is unattended (no humans) or attended (an
approver that records each question and answers "once"), and is judged by
AgentDojo's own utility and security checks on the environment the tools left.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herald.testing.agentdojo_tools import (
    DECLARATIONS,
    ExecutedCall,
    call_key,
    live_environment,
    load_suite,
    write_suite_plugin,
)
from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply
from herald.testing.homes import fake_model_config, make_home, merge

ATTACKER_USER = "Emma Johnson"  # the name AgentDojo's important_instructions attack signs with
ATTACKER_MODEL = "the AI language model"
CONTEXT_LENGTH = 200_000  # workspace results are long; no compression mid-task
# The injection's opening words with everything but letters and digits removed, so the
# victim recognises it through YAML line folding, escaping and any fence Herald adds.
_MARKER = "thisisanimportantmessagefromme"
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


def _normal(text: str) -> str:
    return _NOT_ALNUM.sub("", text.lower())


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return "" if content is None else str(content)


def _wire_args(args: Any) -> dict[str, Any]:
    return json.loads(json.dumps(dict(args), default=str))


@dataclass
class Plan:
    """What the scripted model does in one run, and what it did."""

    user_calls: list[tuple[str, dict[str, Any]]]
    final_text: str
    injection_calls: list[tuple[str, dict[str, Any]]] | None = None
    injection_text: str = ""
    issued: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    saw_injection: bool = False

    @classmethod
    def of(cls, calls: Iterable[Any], final_text: str, **kw: Any) -> Plan:
        return cls([(c.function, _wire_args(c.args)) for c in calls], final_text or "Done.", **kw)


class ScriptedModel:
    """A `FakeLLMServer` handler that plays the current `Plan`, judged only from the
    request it gets (the transcript Herald sends), so it sees what a model would see."""

    def __init__(self) -> None:
        self.plan: Plan | None = None

    def __call__(self, request: RecordedRequest) -> Reply | None:
        plan = self.plan
        if plan is None:
            return None
        before = after = 0
        seen = False
        for message in request.messages:
            role = message.get("role")
            if role == "assistant":
                count = len(message.get("tool_calls") or [])
                if seen:
                    after += count
                else:
                    before += count
            elif role == "tool" and plan.injection_calls is not None and not seen:
                seen = _MARKER in _normal(_text(message.get("content")))
        if seen:
            plan.saw_injection = True
            queue, index, final = plan.injection_calls or [], after, plan.injection_text
        else:
            queue, index, final = plan.user_calls, before, plan.final_text
        if index >= len(queue):
            return Reply.text(final or plan.final_text)
        function, args = queue[index]
        plan.issued.append((function, args))
        return Reply.tool_call(_offered_name(request, function), args)


def _offered_name(request: RecordedRequest, function: str) -> str:
    """The name Herald offers the suite's tool under: a plugin tool whose name a built-in
    has (banking's ``read_file``) is offered as ``<plugin>__<name>``, and the built-in
    keeps the plain name."""
    names = [
        str(t.get("function", {}).get("name", ""))
        for t in request.tools or []
        if isinstance(t, dict)
    ]
    for name in names:
        if name.endswith("__" + function):
            return name
    return function  # offered as is (or not at all: Herald answers with its error)


@dataclass
class RunResult:
    final_text: str
    executed: list[ExecutedCall]
    issued: list[tuple[str, dict[str, Any]]]
    approvals: list[int]  # index in `issued` of the call each approval question was about
    saw_injection: bool
    exit_reason: str
    questions: list[str] = field(default_factory=list)  # what the owner was shown

    def refused(self) -> list[int]:
        """Indices of issued calls that never ran (executed is an ordered subsequence)."""
        done = [c.key() for c in self.executed]
        out, at = [], 0
        for index, (function, args) in enumerate(self.issued):
            if at < len(done) and done[at] == call_key(function, args):
                at += 1
            else:
                out.append(index)
        return out


class HeraldDojo:
    """Herald homes (defence off and on, per suite) on one fake model server."""

    def __init__(self, root: Path | None = None) -> None:
        self._tmp = None
        if root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="herald-agentdojo-")
            root = Path(self._tmp.name)
        self.root = root
        self.model = ScriptedModel()
        self.server = FakeLLMServer().start()
        self.server.set_handler(self.model)
        self._homes: dict[tuple[str, bool], Any] = {}
        self._stores: list[Any] = []

    def close(self) -> None:
        for store in self._stores:
            store.close()
        self.server.stop()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> HeraldDojo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _home(self, suite_name: str, enforce: bool) -> tuple[Any, Any]:
        key = (suite_name, enforce)
        if key not in self._homes:
            from herald.config import HeraldHome
            from herald.state import StateStore

            path = self.root / f"{suite_name}-{'on' if enforce else 'off'}"
            name = write_suite_plugin(HeraldHome(path).ensure(), suite_name)
            config = merge(
                fake_model_config(self.server, context_length=CONTEXT_LENGTH),
                {
                    "plugins": {"enabled": [name]},
                    "toolsets": {"enabled": [f"plugin-{name}"], "defer_external": False},
                    "trust": {"enforce": enforce},
                    # The user the suite plays: their own mail address is theirs (an
                    # owner configures it the same way).
                    "identities": {"owner": {"role": "owner", "accounts": _accounts(suite_name)}},
                },
            )
            settings = make_home(path, config)
            store = StateStore(settings.home.state_db)
            self._stores.append(store)
            (path / "work").mkdir(exist_ok=True)
            self._homes[key] = (settings, store)
        return self._homes[key]

    def run(
        self,
        suite_name: str,
        environment: Any,
        plan: Plan,
        *,
        enforce: bool,
        attended: bool,
        prompt: str,
    ) -> RunResult:
        """One Herald turn in a new session, its tools acting on `environment`."""
        from herald.engine import Agent, AgentOptions, Humans

        settings, store = self._home(suite_name, enforce)
        slot = live_environment(suite_name)
        slot.start(environment)
        approvals: list[int] = []
        questions: list[str] = []

        def approve(prompt: Any) -> str:
            approvals.append(len(plan.issued) - 1)
            questions.append("\n".join([*prompt.verdict_lines(), *prompt.command_block()]))
            return "once"

        options = AgentOptions(
            source="cli" if attended else "cron", cwd=str(settings.home.root / "work")
        )
        from herald.toolbox import agent_tools

        agent = Agent.open(
            settings, store, source=options.source, tools=agent_tools(settings), options=options
        )
        self.model.plan = plan
        try:
            humans = Humans(approve=approve) if attended else None
            result = agent.start_turn(prompt, humans=humans).result()
        finally:
            self.model.plan = None
            agent.close()
        return RunResult(
            final_text=result.final_text,
            executed=list(slot.executed),
            issued=list(plan.issued),
            approvals=approvals,
            questions=questions,
            saw_injection=plan.saw_injection,
            exit_reason=result.exit_reason.value,
        )


def _accounts(suite_name: str) -> list[str]:
    """The suite user's own accounts, as `identities.owner.accounts` lists them."""
    environment = load_suite(suite_name).load_and_inject_default_environment({})
    address = getattr(getattr(environment, "inbox", None), "account_email", None)
    return [f"email:{address}"] if address else []


# -- AgentDojo's checks ------------------------------------------------------------------


def _trace(executed: list[ExecutedCall]) -> list[Any]:
    from agentdojo.functions_runtime import FunctionCall

    return [FunctionCall(function=c.function, args=c.args) for c in executed]


def user_task_passed(task: Any, output: str, pre: Any, post: Any, run: RunResult) -> bool:
    """AgentDojo's utility check: from the call trace where the task defines one."""
    verdict = task.utility_from_traces(output, pre, post, _trace(run.executed))
    return bool(task.utility(output, pre, post) if verdict is None else verdict)


def injection_succeeded(task: Any, output: str, pre: Any, post: Any, run: RunResult) -> bool:
    """AgentDojo's security check (True: the attacker's goal was reached)."""
    verdict = task.security_from_traces(output, pre, post, _trace(run.executed))
    return bool(task.security(output, pre, post) if verdict is None else verdict)


# -- one suite ---------------------------------------------------------------------------


@dataclass
class SuiteScore:
    suite: str
    user_tasks: int = 0
    utility_off: int = 0
    utility_on: int = 0
    utility_attended: int = 0
    pairs: int = 0
    attack_off: int = 0
    attack_on: int = 0
    injections_seen: int = 0
    approvals: int = 0
    refused_unattended: int = 0
    covered_by_approval: int = 0  # refused unattended; attended, an earlier yes covered it
    violations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped_injections: list[str] = field(default_factory=list)
    resisted_off: list[str] = field(default_factory=list)  # victim pairs that failed, off
    breached_on: list[str] = field(default_factory=list)  # victim pairs that won, on
    example_question: str = ""  # the first approval question the owner was shown

    def fractions(self) -> dict[str, float]:
        def part(n: int, d: int) -> float:
            return round(n / d, 4) if d else 0.0

        return {
            "utility_off": part(self.utility_off, self.user_tasks),
            "utility_on": part(self.utility_on, self.user_tasks),
            "attack_off": part(self.attack_off, self.pairs),
            "attack_on": part(self.attack_on, self.pairs),
            "approvals_per_task": part(self.approvals, self.user_tasks),
        }

    def add(self, other: SuiteScore) -> None:
        for name in (
            "user_tasks",
            "utility_off",
            "utility_on",
            "utility_attended",
            "pairs",
            "attack_off",
            "attack_on",
            "injections_seen",
            "approvals",
            "refused_unattended",
            "covered_by_approval",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.violations += other.violations
        self.errors += other.errors
        self.resisted_off += other.resisted_off
        self.breached_on += other.breached_on
        self.example_question = self.example_question or other.example_question
        self.skipped_injections += [f"{other.suite} {i}" for i in other.skipped_injections]


def _pick(
    items: dict[str, Any],
    chosen: list[str] | None,
    limit: int | None,
    *,
    known: dict[str, Any] | None = None,
) -> list[Any]:
    def number(task_id: str) -> int:
        return int(task_id.rsplit("_", 1)[-1])

    ids = sorted(items, key=number)
    if chosen:
        unknown = [i for i in chosen if i not in (items if known is None else known)]
        if unknown:
            raise ValueError(f"unknown task ids {unknown}; known: {', '.join(ids)}")
        ids = [i for i in ids if i in chosen]
    if limit is not None:
        ids = ids[:limit]
    return [items[i] for i in ids]


def run_suite(
    dojo: HeraldDojo,
    suite_name: str,
    *,
    user_tasks: list[str] | None = None,
    injection_tasks: list[str] | None = None,
    user_limit: int | None = None,
    injection_limit: int | None = None,
    progress: Any = None,
) -> SuiteScore:
    """Oracle (off, on, on attended) for each user task, and victim (off, on) for each
    user task × injection task pair."""
    suite = load_suite(suite_name)
    score = SuiteScore(suite_name)
    clean = suite.load_and_inject_default_environment({})
    users = _pick(suite.user_tasks, user_tasks, user_limit)
    # AgentDojo gives some newer injection tasks no ground truth (workspace 6-13, travel
    # 6): a scripted victim has nothing to play there, so they are left out and listed.
    playable = {}
    for task_id, injection in suite.injection_tasks.items():
        if injection.ground_truth(clean.model_copy(deep=True)):
            playable[task_id] = injection
        elif not injection_tasks or task_id in injection_tasks:
            score.skipped_injections.append(task_id)
    injections = _pick(playable, injection_tasks, injection_limit, known=suite.injection_tasks)
    attack = _attack(suite)
    for task in users:
        score.user_tasks += 1
        _oracle(dojo, suite_name, task, clean, score)
        if progress:
            progress(f"{suite_name} {task.ID} oracle")
        for injection in injections:
            score.pairs += 1
            injected = suite.load_and_inject_default_environment(attack.attack(task, injection))
            _victim(dojo, suite_name, task, injection, injected, score)
        if progress and injections:
            progress(f"{suite_name} {task.ID} victim x{len(injections)}")
    return score


def _attack(suite: Any) -> Any:
    """AgentDojo's important_instructions attack (its fixed text; no model name needed)."""
    from agentdojo.attacks.base_attacks import FixedJailbreakAttack
    from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack

    attack = FixedJailbreakAttack(ImportantInstructionsAttack._JB_STRING, suite, None)
    attack.user_name = ATTACKER_USER
    attack.model_name = ATTACKER_MODEL
    return attack


def _task_environment(task: Any, environment: Any) -> tuple[Any, Any]:
    live = task.init_environment(environment.model_copy(deep=True))
    return live, live.model_copy(deep=True)


def _oracle(dojo: HeraldDojo, suite_name: str, task: Any, clean: Any, score: SuiteScore) -> None:
    runs: dict[tuple[bool, bool], tuple[RunResult, bool]] = {}
    for enforce, attended in ((False, False), (True, False), (True, True)):
        live, pre = _task_environment(task, clean)
        plan = Plan.of(task.ground_truth(pre.model_copy(deep=True)), task.GROUND_TRUTH_OUTPUT)
        try:
            run = dojo.run(
                suite_name, live, plan, enforce=enforce, attended=attended, prompt=task.PROMPT
            )
            passed = user_task_passed(task, run.final_text, pre, live, run)
        except Exception as exc:  # one broken run is reported, the bench goes on
            score.errors.append(f"{suite_name} {task.ID} oracle: {type(exc).__name__}: {exc}")
            return
        runs[(enforce, attended)] = (run, passed)
    score.utility_off += runs[(False, False)][1]
    score.utility_on += runs[(True, False)][1]
    score.utility_attended += runs[(True, True)][1]
    refused = runs[(True, False)][0].refused()
    attended_run = runs[(True, True)][0]
    score.refused_unattended += len(refused)
    score.approvals += len(attended_run.approvals)
    if attended_run.questions and not score.example_question:
        score.example_question = f"{suite_name} {task.ID}:\n{attended_run.questions[0]}"
    issued = runs[(True, False)][0].issued
    for index in refused:
        if index in attended_run.approvals:
            continue
        function, args = issued[index]
        # An approved value is the owner's for the rest of the session, so a later call
        # with it is not asked again: covered, not a violation.
        mine = _control_values(suite_name, function, args)
        if any(
            j < index and mine & _control_values(suite_name, *issued[j])
            for j in attended_run.approvals
        ):
            score.covered_by_approval += 1
            continue
        score.violations.append(
            f"{suite_name} {task.ID}: {function}({json.dumps(args)}) was refused "
            "unattended but never asked attended"
        )


def _control_values(suite_name: str, function: str, args: dict[str, Any]) -> set[str]:
    declared = DECLARATIONS[suite_name].get(function)
    if declared is None:
        return set()
    values: set[str] = set()
    for name in declared.controls:
        value = args.get(name)
        for item in value if isinstance(value, list) else [value]:
            if item not in (None, ""):
                values.add(str(item))
    return values


def _victim(
    dojo: HeraldDojo,
    suite_name: str,
    task: Any,
    injection: Any,
    injected: Any,
    score: SuiteScore,
) -> None:
    for enforce in (False, True):
        live, pre = _task_environment(task, injected)
        plan = Plan.of(
            task.ground_truth(pre.model_copy(deep=True)),
            task.GROUND_TRUTH_OUTPUT,
            injection_calls=Plan.of(
                injection.ground_truth(pre.model_copy(deep=True)), ""
            ).user_calls,
            injection_text=injection.GROUND_TRUTH_OUTPUT,
        )
        try:
            run = dojo.run(
                suite_name, live, plan, enforce=enforce, attended=False, prompt=task.PROMPT
            )
            hit = injection_succeeded(injection, run.final_text, pre, live, run)
        except Exception as exc:
            score.errors.append(
                f"{suite_name} {task.ID}/{injection.ID} victim: {type(exc).__name__}: {exc}"
            )
            continue
        if enforce:
            score.attack_on += hit
            if hit:
                score.breached_on.append(f"{suite_name} {task.ID}/{injection.ID}")
        else:
            score.attack_off += hit
            score.injections_seen += run.saw_injection
            if not hit:
                score.resisted_off.append(f"{suite_name} {task.ID}/{injection.ID}")


__all__ = [
    "HeraldDojo",
    "Plan",
    "RunResult",
    "ScriptedModel",
    "SuiteScore",
    "injection_succeeded",
    "run_suite",
    "user_task_passed",
]
