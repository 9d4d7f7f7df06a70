"""The backends' building blocks: the secret-free child environment, the bounded
output buffers, the wrapper-marker filter, the factory."""

from __future__ import annotations

from pathlib import Path

import pytest

from herald.config import ConfigError, HeraldConfig, Secrets
from herald.environments import LocalEnvironment, build_child_env, create_environment
from herald.environments._output import OutputCollector, OutputRing
from herald.environments._streaming import MarkerFilter


def test_child_env_drops_secret_names_values_and_patterns(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("MY_DOTENV_ONLY=dotenv-secret-value\n")
    secrets = Secrets(env_file, environ={})
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/x",
        "MY_DOTENV_ONLY": "dotenv-secret-value",  # named in .env
        "GITHUB_TOKEN": "ghp-whatever-123456",  # secret-looking name
        "DATABASE_PASSWORD": "pw-123456",
        "COPY_OF_IT": "dotenv-secret-value",  # a secret value under another name
        "TOKENIZER_PATH": "/models/tok",  # not a secret name
    }
    child = build_child_env(secrets, {"EXTRA": "1"}, base=base)
    assert child["PATH"] == "/usr/bin" and child["HOME"] == "/home/x"
    assert child["TOKENIZER_PATH"] == "/models/tok" and child["EXTRA"] == "1"
    for name in ("MY_DOTENV_ONLY", "GITHUB_TOKEN", "DATABASE_PASSWORD", "COPY_OF_IT"):
        assert name not in child
    assert child["PAGER"] == "cat" and child["GIT_TERMINAL_PROMPT"] == "0"


def test_child_env_refuses_names_a_shell_cannot_export() -> None:
    with pytest.raises(ValueError, match="invalid environment variable name"):
        build_child_env(None, {"BAD NAME": "x"}, base={})


def test_output_collector_keeps_head_and_tail_beyond_its_cap() -> None:
    collector = OutputCollector(max_bytes=1000)
    collector.feed(b"H" * 400)
    for _ in range(100):
        collector.feed(b"m" * 100)
    collector.feed(b"T" * 600)
    text = collector.text()
    assert text.startswith("H" * 400) and text.endswith("T" * 600)
    assert "10,000 bytes of output were not kept" in text
    assert collector.total_bytes == 11000


def test_output_ring_offsets_count_everything_ever_written() -> None:
    ring = OutputRing(max_chars=10)
    ring.feed(b"abcdef")
    assert ring.read(0) == ("abcdef", 6)
    ring.feed(b"ghijklmnop")
    text, end = ring.read(0)
    assert end == 16 and text.endswith("ghijklmnop") and "earlier characters" in text
    assert ring.read(12) == ("mnop", 16)
    ring.feed("é".encode()[:1])  # half a character waits for the rest
    assert ring.total == 16
    ring.feed("é".encode()[1:])
    assert ring.read(16) == ("é", 17)


def test_create_environment_local_uses_terminal_cwd(tmp_path: Path) -> None:
    config = HeraldConfig.model_validate({"terminal": {"cwd": str(tmp_path)}})
    env = create_environment(config, secrets=None)
    assert isinstance(env, LocalEnvironment) and env.cwd == str(tmp_path)
    assert create_environment(config, secrets=None, cwd="/").cwd == "/"
    bad = HeraldConfig.model_validate({"terminal": {"cwd": str(tmp_path / "missing")}})
    with pytest.raises(ConfigError, match=r"terminal\.cwd"):
        create_environment(bad, secrets=None)


def test_a_detached_child_holding_the_pipe_does_not_hang_the_command(tmp_path: Path) -> None:
    env = LocalEnvironment(str(tmp_path))
    result = env.execute("(sleep 3 &) ; echo quick", cwd=None, timeout=30)
    assert result.exit_code == 0 and result.output == "quick\n"
    assert result.duration_s < 3


def _filtered(*chunks: bytes, flush: bool = False) -> tuple[bytes, list[str]]:
    out = bytearray()
    markers = MarkerFilter(b"\x1fM:", out.extend)
    for chunk in chunks:
        markers.feed(chunk)
    if flush:
        markers.flush()
    return bytes(out), markers.values


def test_the_marker_line_is_found_after_login_noise_even_when_split() -> None:
    assert _filtered(b"\x1fM:PGID=42\nout\n") == (b"out\n", ["PGID=42"])
    assert _filtered(b"motd\nmore\n\x1fM:PG", b"ID=7\nfirst", b" second\n") == (
        b"first second\n",
        ["PGID=7"],
    )
    # A marker-like text inside a line is not the marker; after the marker all is output.
    assert _filtered(b"x\x1fM:no\n\x1fM:PGID=9\n\x1fM:PGID=1\n") == (b"\x1fM:PGID=1\n", ["PGID=9"])


def test_without_a_marker_everything_is_passed_on() -> None:
    assert _filtered(b"bash: setsid: command not found\n", flush=True) == (
        b"bash: setsid: command not found\n",
        [],
    )
