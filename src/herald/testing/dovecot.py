"""A real IMAP server for tests: Debian's Dovecot, started in a temporary folder.

`DovecotServer` writes a throwaway configuration (plain-text logins over loopback,
Maildir under the folder, one passwd-file of users), starts ``dovecot -F`` on a free
port and stops it again. Tests then talk to it with real IMAP clients: the adapter
under test with aioimaplib, and the test itself with the standard library's imaplib
to put mail in and to read flags back.

Root or not, every process runs as the folder's owner (Dovecot's documented
"non-root" set-up), so nothing of the machine's own mail set-up is touched.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from herald.testing.listener import free_port

DOVECOT = "/usr/sbin/dovecot"


class DovecotUnavailable(RuntimeError):
    """Dovecot is not installed or would not start; the message says why."""


class DovecotServer:
    def __init__(self, root: Path, users: dict[str, str]) -> None:
        self.root = root
        self.users = dict(users)
        self.host = "127.0.0.1"
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._own_root = False

    # -- life cycle ---------------------------------------------------------------

    def start(self, timeout: float = 15.0) -> DovecotServer:
        if not Path(DOVECOT).exists() and shutil.which("dovecot") is None:
            raise DovecotUnavailable("dovecot is not installed (Debian package dovecot-imapd)")
        run_as = "nobody" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            # As root the mail processes run as nobody, who must be able to walk to the
            # folder: a pytest temp folder (mode 0700) is not, so use one under /tmp.
            self.root = Path(tempfile.mkdtemp(prefix="herald-dovecot-"))
            self.root.chmod(0o755)
            self._own_root = True
        self.root.mkdir(parents=True, exist_ok=True)
        entry = pwd.getpwnam(run_as)
        for sub in ("run", "state", "mail", "home"):
            (self.root / sub).mkdir(exist_ok=True)
        self.port = free_port()
        (self.root / "passwd").write_text(
            "".join(f"{user}:{{PLAIN}}{password}::::::\n" for user, password in self.users.items())
        )
        conf = self.root / "dovecot.conf"
        conf.write_text(self._config(run_as, entry.pw_uid, entry.pw_gid))
        if os.geteuid() == 0:
            for path in [self.root, *self.root.rglob("*")]:
                os.chown(path, entry.pw_uid, entry.pw_gid)
            os.chown(self.root / "run", 0, 0)  # the master's own folder stays root's
        # The child writes to its own copy of the descriptor: ours is closed at once.
        with (self.root / "stderr.log").open("wb") as log:
            self._proc = subprocess.Popen(
                [shutil.which("dovecot") or DOVECOT, "-F", "-c", str(conf)],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise DovecotUnavailable(f"dovecot exited at start: {self._log_tail()}")
            with contextlib.suppress(OSError), socket.create_connection((self.host, self.port), 1):
                return self
            time.sleep(0.05)
        self.stop()
        raise DovecotUnavailable(
            f"dovecot did not listen within {timeout:.0f}s: {self._log_tail()}"
        )

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            self._terminate(proc)
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def _terminate(self, proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait(5)

    def __enter__(self) -> DovecotServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers for tests -------------------------------------------------------------

    def _log_tail(self) -> str:
        texts = []
        for name in ("stderr.log", "dovecot.log"):
            path = self.root / name
            if path.exists():
                texts.append(path.read_text(errors="replace")[-1500:])
        return " | ".join(t.strip() for t in texts if t.strip()) or "no log"

    def _config(self, user: str, uid: int, gid: int) -> str:
        r = self.root
        return f"""
base_dir = {r}/run
state_dir = {r}/state
log_path = {r}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = {user}
default_internal_group = {user if user != "nobody" else "nogroup"}
default_login_user = {user}
first_valid_uid = {uid}
last_valid_uid = {uid}
first_valid_gid = {gid}
last_valid_gid = {gid}
mail_location = maildir:{r}/mail/%n
mail_privileged_group =
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%n {r}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={r}/home/%n
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {self.port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service stats {{
  unix_listener stats-writer {{
    mode = 0666
  }}
}}
protocol imap {{
  mail_max_userip_connections = 50
}}
"""


__all__ = ["DovecotServer", "DovecotUnavailable"]
