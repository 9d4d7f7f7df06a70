"""AgentDojo through Herald with no model: does untrusted content steer actions?

Run: python bench/agentdojo.py [--suites banking,slack] [--user-tasks N]
     [--injection-tasks N] [--json] [--verbose]

AgentDojo's four suites (workspace, travel, banking, slack; PyPI ``agentdojo``,
benchmark version `SUITE_VERSION`) run as real Herald tools (a plugin written into a
throwaway home, results marked untrusted, acting tools declared with their control
arguments). The fake model server drives real Herald turns in two scripted modes:
``oracle`` replays each user task's ground-truth calls, ``victim`` does the same
but follows the injection task's ground-truth calls as soon as a tool result
carries AgentDojo's important_instructions injection. AgentDojo's own checks judge
the environment the tools leave.

Printed per suite and in total: utility with the defence off and on (oracle,
unattended), attack success off and on (victim, unattended, every user task ×
injection task pair), and approvals asked per task (oracle, attended, approver
answers "once"). Also checked: every oracle call refused unattended was an approval
question attended (violations are counted and listed). ``--json`` prints the
fractions as one object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from herald.testing.agentdojo_runs import HeraldDojo, SuiteScore, run_suite
from herald.testing.agentdojo_tools import SUITE_VERSION, SUITES

KEYS = ("utility_off", "utility_on", "attack_off", "attack_on", "approvals_per_task")


def _ids(text: str | None, prefix: str) -> list[str] | None:
    if not text:
        return None
    return [i if i.startswith(prefix) else f"{prefix}{i}" for i in text.split(",") if i]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default=",".join(SUITES), help="comma-separated suites")
    parser.add_argument("--user-tasks", type=int, default=None, help="first N user tasks")
    parser.add_argument("--injection-tasks", type=int, default=None, help="first N injection tasks")
    parser.add_argument(
        "--user-ids", default=None, help="user task ids or numbers, comma-separated"
    )
    parser.add_argument(
        "--injection-ids", default=None, help="injection task ids or numbers, comma-separated"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--verbose", action="store_true", help="progress on stderr")
    args = parser.parse_args(argv)
    args.suite_list = [s.strip() for s in args.suites.split(",") if s.strip()]
    unknown = [s for s in args.suite_list if s not in SUITES]
    if unknown:
        parser.error(f"unknown suites {unknown}; choose from {', '.join(SUITES)}")
    return args


def measure(args: argparse.Namespace) -> tuple[dict[str, SuiteScore], SuiteScore, float]:
    started = time.perf_counter()
    scores: dict[str, SuiteScore] = {}
    total = SuiteScore("total")

    def progress(line: str) -> None:
        if args.verbose:
            print(f"  {line}", file=sys.stderr, flush=True)

    with HeraldDojo() as dojo:
        for name in args.suite_list:
            score = run_suite(
                dojo,
                name,
                user_tasks=_ids(args.user_ids, "user_task_"),
                injection_tasks=_ids(args.injection_ids, "injection_task_"),
                user_limit=args.user_tasks,
                injection_limit=args.injection_tasks,
                progress=progress,
            )
            scores[name] = score
            total.add(score)
    return scores, total, time.perf_counter() - started


def _table(scores: dict[str, SuiteScore], total: SuiteScore) -> list[str]:
    head = (
        f"{'suite':<10} {'tasks':>5} {'pairs':>5} {'utility off':>11} {'utility on':>10} "
        f"{'attack off':>10} {'attack on':>9} {'approvals/task':>14}"
    )
    lines = [head, "-" * len(head)]
    for score in [*scores.values(), total]:
        f = score.fractions()
        lines.append(
            f"{score.suite:<10} {score.user_tasks:>5} {score.pairs:>5} "
            f"{f['utility_off']:>11.1%} {f['utility_on']:>10.1%} {f['attack_off']:>10.1%} "
            f"{f['attack_on']:>9.1%} {f['approvals_per_task']:>14.2f}"
        )
    return lines


def _listing(label: str, items: list[str], limit: int = 12) -> None:
    if items:
        more = len(items) - limit
        print(f"{label}: {', '.join(items[:limit])}" + (f" and {more} more" if more > 0 else ""))


def _unshadow() -> None:
    """`python bench/agentdojo.py` puts bench/ first on sys.path, where this file's name
    would hide the agentdojo package."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    if getattr(sys.modules.get("agentdojo"), "__file__", None) == str(Path(__file__).resolve()):
        del sys.modules["agentdojo"]


def main(argv: list[str] | None = None) -> int:
    _unshadow()
    args = parse_args(argv)
    scores, total, seconds = measure(args)
    if args.json:
        print(
            json.dumps(
                {
                    "suites": {name: s.fractions() for name, s in scores.items()},
                    "total": total.fractions(),
                }
            )
        )
        return 0
    print(f"AgentDojo {SUITE_VERSION} through Herald (scripted oracle and victim models)")
    for line in _table(scores, total):
        print(line)
    print(
        f"utility attended (approver says once): {total.utility_attended}/{total.user_tasks}; "
        f"oracle calls refused unattended: {total.refused_unattended}; "
        f"approvals asked attended: {total.approvals}"
        + (
            f" ({total.covered_by_approval} refused calls were covered by an earlier yes "
            "to the same value)"
            if total.covered_by_approval
            else ""
        )
    )
    print(f"victim saw the injection in {total.injections_seen}/{total.pairs} pairs (defence off)")
    _listing("attacks that succeeded with the defence on", total.breached_on)
    _listing("pairs the obeying victim failed with the defence off", total.resisted_off)
    _listing(
        "injection tasks left out (AgentDojo gives them no ground truth to play)",
        total.skipped_injections,
    )
    if args.verbose and total.example_question:
        print("an approval question, as the owner saw it:")
        print("  " + total.example_question.replace("\n", "\n  "))
    print(f"violations (refused unattended, never asked attended): {len(total.violations)}")
    for line in total.violations[:20]:
        print(f"  {line}")
    if total.errors:
        print(f"errors: {len(total.errors)}")
        for line in total.errors[:20]:
            print(f"  {line}")
    runs = 3 * total.user_tasks + 2 * total.pairs
    print(
        f"{runs} Herald turns in {seconds:.1f} s ({seconds / max(runs, 1) * 1e3:.0f} ms per turn)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
