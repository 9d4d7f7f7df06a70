"""The gateway caps glibc's malloc arenas (what keeps its resident size flat over a
long run, measured in bench/gateway_soak.py), unless the owner set MALLOC_ARENA_MAX."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

PROBE = (
    "import os, sys\n"
    "from herald.gateway.arenas import limit_malloc_arenas\n"
    "print(limit_malloc_arenas())\n"
)


def _run(env_extra: dict[str, str]) -> str:
    import os

    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    env.update(env_extra)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="arenas are glibc's")
def test_the_cap_is_set_on_glibc() -> None:
    assert _run({}) == "True"


def test_the_owners_own_setting_wins() -> None:
    assert _run({"MALLOC_ARENA_MAX": "4"}) == "False"
