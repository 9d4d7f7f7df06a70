"""`herald chat -q` with nobody at a terminal is unattended: a command outside the
allowlist is refused with the one-line reason; `approvals.unattended_allow` opens it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge
from herald.testing.listener import Listener


def run_oneshot(work: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "herald", "chat", "-q", "fetch the page"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=work,
        stdin=subprocess.DEVNULL,  # not a terminal: nobody can approve
    )


def test_unattended_oneshot_refuses_then_unattended_allow_opens(
    herald_home, fake_llm, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with Listener() as target:
        curl = f"curl -s -m 5 {target.url}/page"
        fake_llm.enqueue(Reply.tool_call("terminal", {"command": curl}), Reply.text("tried"))
        proc = run_oneshot(work)
        assert proc.returncode == 0, proc.stderr
        assert target.reached() == []
        (result,) = [m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool"]
        line = str(result["content"])
        assert f"Not run: `{curl}` is not known read-only" in line
        assert "approvals.unattended_allow (pattern 'curl *')" in line
        assert "is not known read-only and nobody is at a terminal" in proc.stderr
        assert "approvals.unattended_allow" in proc.stderr

        make_home(herald_home, merge(fake_model_config(fake_llm),
                                     {"approvals": {"unattended_allow": ["curl *"]}}))  # fmt: skip
        fake_llm.enqueue(Reply.tool_call("terminal", {"command": curl}), Reply.text("fetched"))
        proc = run_oneshot(work)
        assert proc.returncode == 0, proc.stderr
        assert len(target.reached()) == 1 and b"GET /page" in target.reached()[0]
        assert proc.stdout.strip() == "fetched"
