"""What a path argument points at: the root, a system directory, a home, a raw
block device, a sensitive file.

Paths arrive as the tokenizer produced them: ``~`` stands for the owner's
home (``$HOME``, ``${HOME}`` and ``"$HOME"`` all read ``~``), and when the
caller passes ``env`` its ``HOME`` and ``HERALD_HOME`` values are recognised
as well. Nothing here touches the file system.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Mapping
from enum import Enum

# Stand-in for the owner's home after normalisation: a made-up user under
# /home, so "~/.." resolves to /home and "~/../.." to / like the real thing.
_SELF_HOME = "/home/~"


class Target(Enum):
    ROOT = "root"
    SYSTEM = "system"  # a system directory itself, or everything directly in it
    HOME = "home"  # a user's home directory itself, or everything in it
    OTHER = "other"


SYSTEM_DIRS = frozenset(
    [
        "/bin",
        "/boot",
        "/boot/efi",
        "/dev",
        "/efi",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/lost+found",
        "/media",
        "/mnt",
        "/nix",
        "/nix/store",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/snap",
        "/srv",
        "/sys",
        "/tmp",
        "/usr",
        "/usr/bin",
        "/usr/include",
        "/usr/lib",
        "/usr/lib32",
        "/usr/lib64",
        "/usr/libexec",
        "/usr/local",
        "/usr/local/bin",
        "/usr/local/lib",
        "/usr/local/sbin",
        "/usr/local/share",
        "/usr/sbin",
        "/usr/share",
        "/usr/src",
        "/var",
        "/var/backups",
        "/var/cache",
        "/var/lib",
        "/var/log",
        "/var/mail",
        "/var/spool",
        "/var/tmp",
        "/var/www",
        "/Applications",
        "/Library",
        "/System",
        "/System/Library",
        "/Users",
        "/Volumes",
        "/cores",
        "/private",
        "/private/etc",
        "/private/tmp",
        "/private/var",
        "/private/var/db",
        "/private/var/root",
        "/var/db",
        "/var/root",
        "/opt/homebrew",
        "/usr/local/Cellar",
    ]
)
# Emptying these is survivable; deleting the directory itself is not.
SCRATCH_DIRS = frozenset({"/tmp", "/var/tmp", "/private/tmp", "/var/cache", "/var/log"})
# Parents whose children are applications or mounts rather than the system.
_APP_PARENTS = frozenset({"/opt", "/srv", "/var/www", "/mnt", "/media", "/home", "/Users",
                          "/Volumes", "/Applications"})  # fmt: skip
_HOME_PARENTS = ("/home", "/Users")

_BLOCK_DEVICE_RE = re.compile(
    r"/dev/(?:"
    r"[shv]d[a-z]{1,2}\d*|xvd[a-z]{1,2}\d*|nvme\d+(?:n\d+(?:p\d+)?)?|mmcblk\d+(?:p\d+|boot\d+)?"
    r"|md\d+|md/.+|dm-\d+|mapper/.+|loop\d+|sr\d+|r?disk\d+(?:s\d+)*|disk/.+|nbd\d+|zd\d+"
    r"|zvol/.+|sg\d+|ram\d+|bcache\d+|rbd\d+|drbd\d+|cciss/.+|ubd[a-z]*\d*|ad?a\d+|da\d+"
    r"|fd\d+|root|mem|kmem|port"
    r")"
)
_GLOB_CHARS = frozenset("*?[")

# Sensitive write targets (relative to a home unless absolute).
_SSH_DIR = ".ssh"
_SHELL_RC = frozenset(
    [
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".bash_aliases",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".kshrc",
        ".mkshrc",
        ".cshrc",
        ".tcshrc",
        ".login",
        ".xprofile",
        ".xinitrc",
        ".xsessionrc",
        ".envrc",
    ]
)
_HOME_SENSITIVE_PREFIXES = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".config/gh",
    ".config/gcloud",
    ".config/hub",
    ".config/fish/config.fish",
    ".config/fish/conf.d",
    ".config/autostart",
    ".config/systemd/user",
    ".password-store",
    ".local/share/keyrings",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".pgpass",
    ".my.cnf",
    ".git-credentials",
    ".boto",
    ".s3cfg",
    ".terraformrc",
    ".vault-token",
    "Library/LaunchAgents",
)
# File names that hold credentials wherever they live.
_CREDENTIAL_NAMES = frozenset(
    [
        ".netrc",
        ".pgpass",
        ".git-credentials",
        "authorized_keys",
        "authorized_keys2",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
        ".vault-token",
    ]
)
_ENV_TEMPLATE_SUFFIXES = frozenset({"example", "sample", "template", "dist", "defaults", "tmpl"})
# Under Herald's home everything is the agent's own state or instructions,
# except what it regenerates freely.
_HERALD_FREE = ("cache", "logs")


# Paths longer than this are normalised afresh each time rather than remembered, so an
# adversarial 100 KB operand cannot fill the cache.
_CACHED_PATH_CHARS = 512


def canonical(path: str, env: Mapping[str, str] | None = None) -> str:
    """Absolute, normalised form where that can be known; relative paths stay
    relative (normalised). ``~`` (any home) becomes a /home/<user> path.

    A pure function of the text and the two variables it reads, so the answer for a
    short path is remembered: every rule that looks at a command's operands asks."""
    if not path:
        return path
    home = (env or {}).get("HOME")
    herald = (env or {}).get("HERALD_HOME")
    if len(path) <= _CACHED_PATH_CHARS:
        return _canonical_cached(path, home, herald)
    return _canonical(path, home, herald)


@functools.lru_cache(maxsize=4096)
def _canonical_cached(path: str, home: str | None, herald: str | None) -> str:
    return _canonical(path, home, herald)


def _canonical(path: str, home: str | None, herald: str | None) -> str:
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        path = "~" + path[len(home.rstrip("/")) :]
    if path.startswith("$HERALD_HOME") or path.startswith("${HERALD_HOME}"):
        rest = path.split("}", 1)[1] if path.startswith("${") else path[len("$HERALD_HOME") :]
        path = (herald or "~/.herald") + rest
        if home and path.startswith(home.rstrip("/") + "/"):
            path = "~" + path[len(home.rstrip("/")) :]
    if path.startswith("~"):
        user, _, rest = path[1:].partition("/")
        if user in ("+", "-"):  # ~+ and ~- are $PWD and $OLDPWD
            return posixpath.normpath(rest or ".")
        base = _SELF_HOME if not user else "/root" if user == "root" else f"/home/{user}"
        path = base + ("/" + rest if rest else "")
    if path.startswith("/"):
        norm = posixpath.normpath(path)
        return "/" if norm == "//" else norm
    return posixpath.normpath(path)


_ROOT_HOMES = ("/root", "/var/root", "/private/var/root")  # Linux, macOS


def _is_home(path: str) -> bool:
    if path in _ROOT_HOMES:
        return True
    parent, _, name = path.rpartition("/")
    return parent in _HOME_PARENTS and bool(name)


def classify_delete_target(path: str, env: Mapping[str, str] | None = None) -> Target:
    """How bad deleting path recursively would be."""
    p = canonical(path, env)
    if not p.startswith("/"):
        return Target.OTHER
    if p == "/":
        return Target.ROOT
    if _is_home(p):  # before SYSTEM_DIRS: /root is root's home
        return Target.HOME
    if p in SYSTEM_DIRS:
        return Target.SYSTEM
    parent, _, name = p.rpartition("/")
    parent = parent or "/"
    if any(ch in _GLOB_CHARS for ch in name):
        # a glob directly inside the root, a system directory or a home
        if parent == "/":
            return Target.ROOT
        if parent in SYSTEM_DIRS and parent not in SCRATCH_DIRS:
            return Target.HOME if parent in _HOME_PARENTS else Target.SYSTEM
        if _is_home(parent):
            return Target.HOME
    if any(ch in _GLOB_CHARS for ch in parent):
        # /*/…, /home/*/… and the like sweep across top-level trees
        top = "/" + p.split("/")[1]
        if any(ch in _GLOB_CHARS for ch in top):
            return Target.ROOT
    return Target.OTHER


def is_broad_tree(path: str, env: Mapping[str, str] | None = None) -> bool:
    """Root, a system directory, a home, or a directory one level below root
    or a home: too broad for a recursive permission change without asking."""
    if classify_delete_target(path, env) is not Target.OTHER:
        return True
    p = canonical(path, env)
    if not p.startswith("/"):
        return False
    parts = p.strip("/").split("/")
    if len(parts) <= 1:
        return True
    parent = posixpath.dirname(p)
    if _is_home(parent):
        return True
    return parent in SYSTEM_DIRS and parent not in SCRATCH_DIRS and parent not in _APP_PARENTS


def is_block_device(path: str) -> bool:
    return _BLOCK_DEVICE_RE.fullmatch(canonical(path)) is not None


def _herald_homes(env: Mapping[str, str] | None) -> list[str]:
    homes = [canonical("~/.herald", env)]
    configured = (env or {}).get("HERALD_HOME")
    if configured:
        homes.append(canonical(configured, env))
    return homes


def _under(path: str, base: str) -> str | None:
    """path relative to base, or None when it is not inside base."""
    if path == base:
        return ""
    if path.startswith(base.rstrip("/") + "/"):
        return path[len(base.rstrip("/")) + 1 :]
    return None


def sensitive_target(path: str, env: Mapping[str, str] | None = None) -> str | None:
    """A short name for what writing to path would touch, or None if ordinary."""
    p = canonical(path, env)
    if not p:
        return None
    for herald in _herald_homes(env):
        rel = _under(p, herald)
        if rel is not None and rel.split("/", 1)[0] not in _HERALD_FREE:
            return "Herald's own configuration or state"
    name = posixpath.basename(p)
    if _is_env_file(name):
        return "a .env secrets file"
    if name in _CREDENTIAL_NAMES:
        return "a credentials file"
    if p == "/etc" or p.startswith("/etc/") or p.startswith("/private/etc/"):
        return "system configuration under /etc"
    if p.startswith(("/private/var/db/", "/var/db/")):
        return "macOS system databases (/var/db: users, sudo, keychains)"
    if not p.startswith("/"):
        return "a shell startup file" if p in _SHELL_RC else None
    # inside some home
    parts = p.split("/")
    root_home = next((h for h in _ROOT_HOMES if p.startswith(h + "/")), None)
    if root_home is not None:
        rel = p[len(root_home) + 1 :]
    elif len(parts) > 3 and "/" + parts[1] in _HOME_PARENTS:
        rel = "/".join(parts[3:])
    else:
        return None
    if rel in _SHELL_RC:
        return "a shell startup file"
    for prefix in _HOME_SENSITIVE_PREFIXES:
        if rel == prefix or rel.startswith(prefix + "/"):
            return (
                "SSH keys and settings" if prefix == _SSH_DIR else "a credentials or autostart file"
            )
    return None


def _is_env_file(name: str) -> bool:
    if name == ".env":
        return True
    return name.startswith(".env.") and name[5:].split(".")[0] not in _ENV_TEMPLATE_SUFFIXES


_SECRET_READ_NAMES = _CREDENTIAL_NAMES - {"authorized_keys", "authorized_keys2"}
_SECRET_AREAS = frozenset({"SSH keys and settings", "a credentials or autostart file",
                           "Herald's own configuration or state"})  # fmt: skip


def secret_source(path: str, env: Mapping[str, str] | None = None) -> bool:
    """True when reading path yields credentials (keys, .env, cloud configs)."""
    p = canonical(path, env)
    name = posixpath.basename(p)
    if name in _SECRET_READ_NAMES or _is_env_file(name):
        return True
    if p in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/master.passwd"):
        return True
    return sensitive_target(p, env) in _SECRET_AREAS
