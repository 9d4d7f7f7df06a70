"""What only the ssh backend has: connection failures, connection reuse, config."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from environment_support import SshdServer, ssh_environment, wait_dead, wait_for_file

from herald.config import ConfigError, HeraldConfig
from herald.environments import EnvironmentConnectionError, SshEnvironment, create_environment


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


def test_a_closed_port_is_an_environment_connection_error(sshd: SshdServer, tmp_path: Path) -> None:
    env = SshEnvironment(
        "127.0.0.1",
        user=sshd.user,
        port=_closed_port(),
        identity_file=str(sshd.client_key),
        options=sshd.client_options,
        connect_timeout=3,
    )
    try:
        with pytest.raises(EnvironmentConnectionError, match="Connection refused"):
            env.execute("echo never", cwd=None, timeout=10)
        with pytest.raises(EnvironmentConnectionError):
            env.read_bytes(str(tmp_path / "x"))
        with pytest.raises(EnvironmentConnectionError):
            env.stat("/")
    finally:
        env.close()


def test_an_unknown_key_is_an_environment_connection_error(
    sshd: SshdServer, tmp_path: Path
) -> None:
    stranger = tmp_path / "stranger_key"
    import subprocess

    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
        check=True,
        capture_output=True,
    )
    env = SshEnvironment(
        "127.0.0.1",
        user=sshd.user,
        port=sshd.port,
        identity_file=str(stranger),
        options=sshd.client_options,
    )
    try:
        with pytest.raises(EnvironmentConnectionError, match="Permission denied"):
            env.execute("echo never", cwd=None, timeout=10)
    finally:
        env.close()


def test_one_connection_is_reused_and_closed(sshd: SshdServer, tmp_path: Path) -> None:
    env = ssh_environment(sshd, None, cwd=str(tmp_path))
    control_dir = Path(env._control_dir)
    for _ in range(3):
        assert env.execute("echo hi", cwd=None, timeout=30).output == "hi\n"
    sockets = list(control_dir.iterdir())
    assert len(sockets) == 1 and sockets[0].is_socket()
    assert len(str(sockets[0])) < 100  # unix socket paths are limited to ~104 bytes
    env.close()
    assert not control_dir.exists()


def test_the_remote_home_is_the_default_working_directory(sshd: SshdServer) -> None:
    env = ssh_environment(sshd, None)
    try:
        home = env.execute('printf "%s" "$HOME"', cwd=None, timeout=30).output
        assert env.cwd == home
    finally:
        env.close()


def _ssh_config(sshd: SshdServer, **overrides: object) -> HeraldConfig:
    ssh = {
        "host": "127.0.0.1",
        "user": sshd.user,
        "port": sshd.port,
        "identity_file": str(sshd.client_key),
        "options": sshd.client_options,
        **overrides,
    }
    return HeraldConfig.model_validate({"terminal": {"backend": "ssh", "ssh": ssh}})


def test_create_environment_builds_a_working_ssh_backend(sshd: SshdServer, tmp_path: Path) -> None:
    env = create_environment(_ssh_config(sshd), secrets=None, cwd=str(tmp_path))
    try:
        assert isinstance(env, SshEnvironment)
        assert env.execute("pwd", cwd=None, timeout=30).output == f"{tmp_path}\n"
    finally:
        env.close()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"host": None}, "terminal.ssh.host is not set"),
        ({"host": "-oProxyCommand=x"}, "is not a host name"),
        ({"identity_file": "/nonexistent/key"}, "identity_file"),
        ({"options": ["NoEqualsSign"]}, "Key=Value"),
        ({"user": "a@b"}, "terminal.ssh.user"),
    ],
)
def test_a_bad_ssh_config_is_a_clear_config_error(overrides: dict, message: str) -> None:
    ssh = {"host": "example.invalid", **overrides}
    config = HeraldConfig.model_validate({"terminal": {"backend": "ssh", "ssh": ssh}})
    with pytest.raises(ConfigError, match=message):
        create_environment(config, secrets=None)


def test_background_processes_do_not_use_up_the_shared_connection(
    sshd: SshdServer, tmp_path: Path
) -> None:
    """sshd allows 10 sessions per shared connection by default (the server here
    keeps that default); long-lived processes must not starve later commands."""
    env = ssh_environment(sshd, None, cwd=str(tmp_path))
    try:
        processes = [env.spawn(f"echo $$ > bg{i}.pid; exec sleep 600", cwd=None) for i in range(11)]
        assert env.execute("echo still fine", cwd=None, timeout=30).output == "still fine\n"
        assert all(p.poll() is None for p in processes)
        pids = [int(wait_for_file(tmp_path / f"bg{i}.pid")) for i in range(11)]
    finally:
        env.close()
    assert all(wait_dead(pid) for pid in pids)  # close() reached every remote group


def test_login_noise_does_not_leak_into_output_or_files(sshd: SshdServer, tmp_path: Path) -> None:
    """bash sources ~/.bashrc for commands run by sshd; a chatty one must not
    corrupt command output, file contents or stat results."""
    bashrc = sshd.remote_home / ".bashrc"
    bashrc.write_text('echo "welcome to the remote host"\necho "stderr noise" >&2\n')
    env = ssh_environment(sshd, None, cwd=str(tmp_path))
    try:
        assert env.execute("echo clean", cwd=None, timeout=30).output == "clean\n"
        env.write_bytes("data.bin", b"\x00payload")
        assert env.read_bytes("data.bin") == b"\x00payload"
        info = env.stat("data.bin")
        assert info is not None and info.size == 8
        process = env.spawn("echo background", cwd=None)
        assert process.wait(10) == 0 and process.read_output(0)[0] == "background\n"
    finally:
        bashrc.unlink()
        env.close()
