"""clarify: the answer comes back, no human is an error that says what to do, a
timeout says the user did not answer."""

from __future__ import annotations

import json
import threading

from test_file_support import call, err, make_registry, ok

from herald.tools.registry import ToolContext


def test_answer_is_returned_and_question_reaches_the_surface():
    asked: list[tuple[str, list[str] | None]] = []

    def ask(question: str, choices: list[str] | None) -> str | None:
        asked.append((question, choices))
        return "use PostgreSQL"

    ctx = ToolContext(clarify=ask)
    out = ok(
        call(
            make_registry(),
            ctx,
            "clarify",
            question=" Which DB? ",
            choices=["SQLite", "PostgreSQL"],
        )
    )
    assert json.loads(out) == {"answered": True, "answer": "use PostgreSQL"}
    assert asked == [("Which DB?", ["SQLite", "PostgreSQL"])]


def test_answer_from_another_thread():
    """A surface typically answers from its own thread (the CLI prompt, a chat callback)."""
    answer: dict[str, str] = {}
    ready = threading.Event()

    def ask(question: str, choices: list[str] | None) -> str | None:
        def user() -> None:
            answer["text"] = "yes"
            ready.set()

        threading.Thread(target=user).start()
        ready.wait(5)
        return answer.get("text")

    out = ok(call(make_registry(), ToolContext(clarify=ask), "clarify", question="Proceed?"))
    assert json.loads(out)["answer"] == "yes"


def test_no_human_present_is_a_clear_error():
    ctx = ToolContext(clarify=None, surface="cron")
    message = err(call(make_registry(), ctx, "clarify", question="Which branch?"))
    assert "no user is present" in message and "cron" in message
    assert "best judgement" in message and "assumption" in message


def test_timeout_says_the_user_did_not_answer():
    ctx = ToolContext(clarify=lambda q, c: None)
    out = json.loads(ok(call(make_registry(), ctx, "clarify", question="Which branch?")))
    assert out["answered"] is False and "did not answer in time" in out["note"]


def test_bad_arguments():
    reg = make_registry()
    ctx = ToolContext(clarify=lambda q, c: "x")
    assert "question" in err(call(reg, ctx, "clarify", question="  "))
    assert "choices" in err(call(reg, ctx, "clarify", question="q", choices=[1, 2]))
    assert "at most" in err(
        call(reg, ctx, "clarify", question="q", choices=[str(i) for i in range(20)])
    )


def test_schema_comes_from_the_signature():
    from herald.tools.clarify import clarify

    params = clarify.definition()["function"]["parameters"]
    assert params["required"] == ["question"]
    assert params["properties"]["question"] == {"type": "string"}
    choices = params["properties"]["choices"]
    assert choices["type"] == "array" and choices["items"] == {"type": "string"}
    assert "the user may still answer freely" in choices["description"]


def test_argument_errors_name_the_argument_and_what_was_sent():
    reg = make_registry()
    ctx = ToolContext(clarify=lambda q, c: "x")
    assert "question must be a string, got 5" in err(call(reg, ctx, "clarify", question=5))
    assert "question is required" in err(call(reg, ctx, "clarify", choices=["a"]))
    assert "choices.0 must be a string, got 1" in err(
        call(reg, ctx, "clarify", question="q", choices=[1, 2])
    )
    assert "'urgent' is not an argument of clarify" in err(
        call(reg, ctx, "clarify", question="q", urgent=True)
    )
    # a bare string is a one-choice list (coerced before the signature checks it)
    assert json.loads(ok(call(reg, ctx, "clarify", question="q", choices="only")))["answered"]
