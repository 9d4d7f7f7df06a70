"""`herald usage`: spend and tokens grouped by day, model, source or session, as text
and JSON, with the budget caps' standing."""

from __future__ import annotations

import json

import yaml

from herald.testing.fake_llm import FakeUsage, Reply


def test_usage_groups_and_json(herald_home, fake_llm, run_cli):
    config = yaml.safe_load((herald_home / "config.yaml").read_text())
    config["model"]["pricing"] = {"input_per_mtok": 1000, "output_per_mtok": 0}
    config["budget"] = {"daily_usd": 100}
    (herald_home / "config.yaml").write_text(yaml.safe_dump(config))
    usage = FakeUsage(prompt_tokens=1000, completion_tokens=5, cache_read_tokens=400)
    fake_llm.enqueue(Reply.text("one", usage=usage), Reply.text("two", usage=usage))
    first = json.loads(run_cli("chat", "-q", "hello", "--json").stdout)["session_id"]
    run_cli("chat", "-q", "again", "--json")

    data = json.loads(run_cli("usage", "--by", "session", "--json").stdout)
    assert data["by"] == "session" and {r["key"] for r in data["rows"]} >= {first}
    assert data["total"]["calls"] == 2
    assert data["total"]["cache_read_tokens"] == 800
    assert data["total"]["cache_hit_rate"] == 0.4
    assert data["total"]["cost_usd"] > 0
    assert data["caps"][0]["key"] == "budget.daily_usd"
    assert data["caps"][0]["spent"] == data["total"]["cost_usd"]

    text = run_cli("usage", "--by", "model", "--days", "7").stdout
    assert "openai/fake-gpt" in text and "cache read" in text and "40%" in text
    assert "budget.daily_usd:" in text and "of $100.0000 today" in text

    bad = run_cli("usage", "--by", "planet")
    assert bad.returncode == 2 and "use --by one of" in bad.stderr
