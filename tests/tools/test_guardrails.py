"""The guardrail controller: warn first, halt past a threshold, hard stop only when
nobody is watching."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from herald.config import HeraldConfig
from herald.config.schema_tools import GuardrailsConfig
from herald.tools import GUARDRAIL_HEADER, GuardrailController, is_unattended, resolve_hard_stop


def fail(g: GuardrailController, name: str = "read_file", args: str = '{"path": "x"}'):
    return g.observe(name, args, "[TOOL_ERROR] no such file", is_error=True, read_only=True)


def ok(g: GuardrailController, name: str, args: str, content: str, *, read_only: bool = True):
    return g.observe(name, args, content, is_error=False, read_only=read_only)


def test_identical_failing_calls_warn_then_halt():
    g = GuardrailController(GuardrailsConfig(), hard_stop=True)
    actions = [fail(g).action for _ in range(4)]
    assert actions == ["ok", "warn", "warn", "halt"]
    assert g.halted is not None and GUARDRAIL_HEADER in (g.halted.message or "")


def test_argument_order_and_spacing_do_not_hide_a_repeat():
    g = GuardrailController(GuardrailsConfig(identical_failure_warn=2), hard_stop=True)
    fail(g, args='{"a": 1, "b": 2}')
    assert fail(g, args='{"b":2,"a":1}').action == "warn"


def test_without_hard_stop_the_halt_threshold_only_sharpens_the_warning():
    g = GuardrailController(GuardrailsConfig(), hard_stop=False)
    decisions = [fail(g) for _ in range(6)]
    assert [d.action for d in decisions] == ["ok", "warn", "warn", "warn", "warn", "warn"]
    assert "change course now" in (decisions[3].message or "")
    assert g.halted is None


def test_repeated_failures_of_one_tool_with_different_arguments():
    cfg = GuardrailsConfig(identical_failure_warn=5, identical_failure_halt=5)
    g = GuardrailController(cfg, hard_stop=True)
    actions = [fail(g, "terminal", f'{{"command": "step {i}"}}').action for i in range(8)]
    assert actions == ["ok", "ok", "ok", "warn", "warn", "warn", "warn", "halt"]


def test_a_success_resets_that_tools_failure_counts():
    g = GuardrailController(GuardrailsConfig(), hard_stop=True)
    fail(g)
    ok(g, "read_file", '{"path": "x"}', "contents")
    assert fail(g).action == "ok"


def test_same_read_only_result_without_progress():
    g = GuardrailController(GuardrailsConfig(), hard_stop=True)
    actions = [ok(g, "search_files", '{"q": "x"}', "no matches").action for _ in range(6)]
    assert actions == ["ok", "ok", "warn", "warn", "warn", "halt"]


def test_a_side_effect_counts_as_progress():
    g = GuardrailController(GuardrailsConfig(), hard_stop=True)
    for _ in range(2):
        ok(g, "search_files", '{"q": "x"}', "no matches")
    ok(g, "write_file", '{"path": "x"}', "written", read_only=False)
    assert ok(g, "search_files", '{"q": "x"}', "no matches").action == "ok"


def test_a_changing_result_is_progress_and_non_read_only_calls_are_not_counted():
    g = GuardrailController(GuardrailsConfig(), hard_stop=True)
    assert all(
        ok(g, "process", '{"action": "poll"}', f"running {i}").action == "ok" for i in range(10)
    )
    assert all(
        ok(g, "terminal", '{"command": "date"}', "same", read_only=False).action == "ok"
        for _ in range(10)
    )


def test_thresholds_come_from_config_and_can_be_disabled():
    g = GuardrailController(
        GuardrailsConfig(identical_failure_warn=1, identical_failure_halt=2), True
    )
    assert [fail(g).action for _ in range(2)] == ["warn", "halt"]
    off = GuardrailController(GuardrailsConfig(enabled=False), hard_stop=True)
    assert all(fail(off).action == "ok" for _ in range(20))


def test_halt_below_warn_is_rejected():
    with pytest.raises(ValidationError, match="no_progress_halt"):
        GuardrailsConfig(no_progress_warn=5, no_progress_halt=2)
    assert HeraldConfig.model_validate({"guardrails": {"hard_stop": True}}).guardrails.hard_stop


@pytest.mark.parametrize(
    ("surface", "approver", "unattended"),
    [
        ("cli", False, False),
        ("api", True, False),
        ("api", False, True),
        ("cron", False, True),
        ("webhook", True, True),
        ("telegram", False, True),
        ("discord", True, True),
    ],
)
def test_hard_stop_defaults_on_only_for_unattended_surfaces(surface, approver, unattended):
    assert is_unattended(surface, has_approver=approver) is unattended
    assert resolve_hard_stop(GuardrailsConfig(), surface, has_approver=approver) is unattended
    assert (
        resolve_hard_stop(GuardrailsConfig(hard_stop=False), surface, has_approver=approver)
        is False
    )
    assert (
        resolve_hard_stop(GuardrailsConfig(hard_stop=True), surface, has_approver=approver) is True
    )
