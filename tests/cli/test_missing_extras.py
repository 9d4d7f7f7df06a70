"""A part of Herald whose extra is not installed says which extra to install."""

from __future__ import annotations

import os
import subprocess
import sys

from herald.testing.homes import make_home
from herald.testing.strong_secrets import API_KEY

# Runs the real CLI in a subprocess where the gateway's libraries cannot be imported, as
# on an install without the `gateway` extra.
WITHOUT_GATEWAY_LIBS = (
    "import sys\n"
    "for name in ('fastapi', 'uvicorn', 'telegram'):\n"
    "    sys.modules[name] = None\n"
    "from herald.cli import main\n"
    "sys.argv = ['herald', *sys.argv[1:]]\n"
    "main()\n"
)


def test_gateway_run_without_the_gateway_extra_names_the_extra(isolated_env):
    make_home(
        isolated_env,
        {"gateway": {"platforms": {"api": {"enabled": True, "port": 0, "api_key": API_KEY}}}},
    )
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_GATEWAY_LIBS, "gateway", "run"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'herald[gateway]'" in proc.stderr
    assert "fastapi" in proc.stderr
    assert "Traceback" not in proc.stderr
