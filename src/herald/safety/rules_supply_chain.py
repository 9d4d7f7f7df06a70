"""Rules for package installs that fetch code from somewhere other than the
ecosystem's default registry: an extra or replacement index, a direct URL or
VCS reference, requirements read from a download, or an index set through
the environment or a persistent config change.

The effect judged: code from an unvetted source will run at install time
(setup.py, postinstall scripts, build hooks) and again when imported.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from herald.safety.carriers import stdin_of
from herald.safety.invocation import Context, Invocation
from herald.safety.long_options import expand_long
from herald.safety.shell_ast import SimpleCommand

UNTRUSTED_PACKAGE = "dangerous.untrusted_package"

# Registries and well-known official mirrors: installing from these is the default.
_TRUSTED_HOSTS = frozenset({"pypi.org", "pypi.python.org", "files.pythonhosted.org",
                            "test.pypi.org", "download.pytorch.org", "registry.npmjs.org",
                            "registry.yarnpkg.com", "rubygems.org", "index.crates.io",
                            "crates.io", "proxy.golang.org", "repo.anaconda.com",
                            "conda.anaconda.org"})  # fmt: skip
_URL_RE = re.compile(r"^(?:[a-z][a-z0-9+.-]*\+)?(?:https?|ftp|file|git|ssh|svn|hg|bzr)://", re.I)
_VCS_SHORTHAND_RE = re.compile(r"^(?:github|gitlab|bitbucket|gist):|^git@", re.I)

_PIP_NAMES = re.compile(r"pip[\d.]*|pip3|uv|uvx|pipx|easy_install|poetry|pdm|rye|hatch")
# pip install's long options (optparse resolves any unambiguous prefix).
_PIP_LONG = {o: o for o in (
    "--index-url", "--extra-index-url", "--no-index", "--find-links", "--trusted-host",
    "--requirement", "--constraint", "--editable", "--target", "--platform", "--python-version",
    "--implementation", "--abi", "--user", "--root", "--prefix", "--src", "--upgrade",
    "--upgrade-strategy", "--force-reinstall", "--ignore-installed", "--ignore-requires-python",
    "--no-build-isolation", "--use-pep517", "--check-build-dependencies", "--break-system-packages",
    "--config-settings", "--global-option", "--compile", "--no-compile", "--no-warn-script-location",
    "--no-warn-conflicts", "--no-binary", "--only-binary", "--prefer-binary", "--require-hashes",
    "--progress-bar", "--root-user-action", "--report", "--no-clean", "--dry-run", "--no-deps",
    "--pre", "--quiet", "--verbose", "--help", "--isolated", "--require-virtualenv", "--python",
    "--log", "--no-input", "--keyring-provider", "--proxy", "--retries", "--timeout",
    "--exists-action", "--cert", "--client-cert", "--cache-dir", "--no-cache-dir",
    "--disable-pip-version-check", "--no-color", "--use-feature", "--use-deprecated",
    "--index", "--default-index", "--extra-index", "--system", "--from", "--with",
    "--resolution", "--prerelease", "--link-mode", "--refresh", "--reinstall", "--exclude-newer",
    "--index-strategy", "--allow-insecure-host", "--group", "--editable-mode", "--spec",
)}  # fmt: skip
# uv's names for the same switches share their meaning, so --extra resolves.
_PIP_LONG.update({"--index": "--index-url", "--default-index": "--index-url",
                  "--extra-index": "--extra-index-url"})  # fmt: skip
_PIP_INDEX_FLAGS = frozenset({"--index-url", "--extra-index-url", "--find-links"})
_NPM_NAMES = frozenset({"npm", "pnpm", "yarn", "bun", "cnpm", "npx", "bunx"})
_NPM_INSTALL = frozenset({"install", "i", "add", "isntall", "in", "ins", "inst", "insta",
                          "instal", "install-test", "it", "ci", "update", "up", "upgrade",
                          "global", "x", "dlx", "exec"})  # fmt: skip
# Environment variables that point an installer at a different index.
_INDEX_VARIABLES = frozenset({"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS",
                              "PIP_TRUSTED_HOST", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL",
                              "UV_INDEX", "UV_DEFAULT_INDEX", "UV_FIND_LINKS",
                              "NPM_CONFIG_REGISTRY", "npm_config_registry", "YARN_REGISTRY",
                              "YARN_NPM_REGISTRY_SERVER", "GOPROXY", "GOINSECURE",
                              "GONOSUMCHECK", "GOFLAGS", "CARGO_REGISTRIES_DEFAULT",
                              "BUNDLE_MIRROR__ALL", "GEM_SOURCE", "PIP_NO_VERIFY"})  # fmt: skip


def untrusted_source(value: str) -> bool:
    """value is a URL (or VCS reference) outside the default registries."""
    value = value.strip().strip("'\"")
    if "@" in value and " @ " in value:  # PEP 508 "name @ https://…"
        value = value.split(" @ ", 1)[1].strip()
    if _VCS_SHORTHAND_RE.match(value):
        return True
    if not _URL_RE.match(value):
        return False
    parts = urlsplit(value.split("+", 1)[1] if "+" in value.split("://", 1)[0] else value)
    if parts.scheme != "https":
        return True  # plain http, ftp, file://, git://: readable or forgeable in transit
    return (parts.hostname or "") not in _TRUSTED_HOSTS or "+" in value.split("://", 1)[0]


def _stdin_download(inv: Invocation) -> bool:
    return stdin_of(inv.cmd).kind in ("download", "decoded")


def _pip_args(inv: Invocation) -> list[str] | None:
    """The arguments after `install`/`add`, for pip, uv pip, pipx, python -m pip."""
    args = inv.args
    name = inv.name
    if re.fullmatch(r"python[\d.]*|py", name):
        if args[:2] not in (["-m", "pip"], ["-m", "uv"], ["-m", "pipx"]):
            return None
        args = args[2:]
        name = "pip"
    elif not _PIP_NAMES.fullmatch(name):
        return None
    if name in ("easy_install", "uvx"):
        return args  # every argument names something to install (uvx --from …)
    if name in ("poetry", "pdm", "rye", "hatch"):
        verbs = [a for a in args if not a.startswith("-")][:1]
        return args[args.index(verbs[0]) + 1 :] if verbs in (["add"], ["install"]) else None
    if (name == "uv" and args[:1] == ["pip"]) or (name == "uv" and args[:1] == ["tool"]):
        args = args[1:]
    verbs = [a for a in args if not a.startswith("-")][:1]
    if verbs not in (["install"], ["add"], ["download"], ["wheel"], ["sync"], ["run"], ["inject"]):
        return None
    return args[args.index(verbs[0]) + 1 :]


def _pip_danger(inv: Invocation, args: list[str]) -> str:
    i = 0
    while i < len(args):
        arg = args[i]
        key, eq, value = arg.partition("=")
        if key.startswith("--"):
            key = expand_long(key, _PIP_LONG)
        elif key in ("-i", "-f", "-r", "-c", "-e") or (
            key[:2] in ("-i", "-f", "-r") and len(key) > 2
        ):
            if len(key) > 2 and not eq:
                key, value, eq = key[:2], key[2:], "="
            key = {"-i": "--index-url", "-f": "--find-links", "-r": "--requirement",
                   "-c": "--constraint", "-e": "--editable"}[key]  # fmt: skip
        if not eq and key in (*_PIP_INDEX_FLAGS, "--trusted-host", "--requirement",
                              "--constraint", "--editable") and i + 1 < len(args):  # fmt: skip
            value = args[i + 1]
            i += 1
        if key in _PIP_INDEX_FLAGS and untrusted_source(value):
            return f"installs from the package index {value}"
        if key in ("--trusted-host", "--allow-insecure-host"):
            return f"turns off certificate checks for {value}"
        if key in ("--requirement", "--constraint", "--editable") and (
            untrusted_source(value) or (value in ("-", "/dev/stdin") and _stdin_download(inv))
        ):
            return f"installs what a download lists ({key} {value})"
        if not arg.startswith("-") and untrusted_source(arg):
            return f"installs a package straight from {arg}"
        if arg == "-" and _stdin_download(inv):
            return "installs packages named by a download"
        i += 1
    return ""


def _runner_danger(inv: Invocation) -> str:
    """npx / bunx / pnpm dlx running a package fetched from a URL or a repository."""
    specs = [a for a in inv.args if not a.startswith("-")][:1]
    for spec in specs:
        if untrusted_source(spec) or re.fullmatch(r"[\w-][\w.-]*/[\w.-]+(?:#.*)?", spec):
            return f"downloads and runs {spec}"
    return ""


def _npm_danger(inv: Invocation) -> str:
    args = inv.args
    if inv.name in ("npx", "bunx"):
        return _runner_danger(inv)
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if key.startswith("--reg") and "--registry".startswith(key):
            value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if untrusted_source(value):
                return f"installs from the registry {value}"
    verbs = [a for a in args if not a.startswith("-")]
    if inv.name == "yarn" and not verbs:
        return ""
    if not verbs:
        return ""
    if verbs[:2] in (["config", "set"], ["set", "registry"]) or verbs[:1] == ["set"]:
        rest = " ".join(verbs[1:])
        if "registry" in rest and untrusted_source(verbs[-1]):
            return f"points every later install at {verbs[-1]}"
        return ""
    if verbs[0] not in _NPM_INSTALL:
        return ""
    for spec in verbs[1:]:
        at_url = re.search(r"@([a-z+]+://.*)$", spec)
        if untrusted_source(spec) or (at_url and untrusted_source(at_url.group(1))):
            return f"installs a package straight from {spec}"
        if re.fullmatch(r"[\w-][\w.-]*/[\w.-]+(?:#.*)?", spec):
            return f"installs a package straight from the GitHub repository {spec}"
    return ""


def _other_danger(inv: Invocation) -> str:
    name, args = inv.name, inv.args
    if name == "gem" and args[:1] == ["install"]:
        for i, arg in enumerate(args):
            source = args[i + 1] if i + 1 < len(args) else ""
            if arg in ("-s", "--source") and untrusted_source(source):
                return f"installs gems from {source}"
    elif name == "cargo" and args[:1] == ["install"]:
        for i, arg in enumerate(args):
            value = (
                arg.split("=", 1)[1] if "=" in arg else (args[i + 1] if i + 1 < len(args) else "")
            )
            if arg.split("=", 1)[0] in ("--git", "--index") and untrusted_source(value):
                return f"builds and installs a crate from {value}"
    elif name == "brew" and args[:1] in (["install"], ["reinstall"]):
        for arg in args[1:]:
            if untrusted_source(arg):
                return f"installs a formula straight from {arg}"
    elif name in ("conda", "mamba", "micromamba") and args[:1] == ["install"]:
        for i, arg in enumerate(args):
            if arg in ("-c", "--channel") and i + 1 < len(args) and untrusted_source(args[i + 1]):
                return f"installs from the channel {args[i + 1]}"
    elif (
        _PIP_NAMES.fullmatch(name)
        and args[:2] == ["config", "set"]
        and len(args) >= 4
        and "index" in args[2]
        and untrusted_source(args[3])
    ):
        return f"points every later pip install at {args[3]}"
    return ""


def rule_package_sources(inv: Invocation, ctx: Context) -> None:
    what = ""
    pip_args = _pip_args(inv)
    if pip_args is not None:
        what = _pip_danger(inv, pip_args)
    elif inv.name in _NPM_NAMES:
        what = _npm_danger(inv)
    else:
        what = _other_danger(inv)
    if what:
        ctx.approval(UNTRUSTED_PACKAGE, what, inv.segment)


def check_index_variables(cmd: SimpleCommand, ctx: Context) -> None:
    """``PIP_INDEX_URL=http://… pip install x``, ``export GOPROXY=…``: the
    same index switch made through the environment."""
    words = list(cmd.assignments)
    if cmd.words and cmd.words[0].text in ("export", "env", "declare", "set", "setenv"):
        words.extend(cmd.words[1:])
    for word in words:
        name, eq, value = word.text.partition("=")
        if not eq or name not in _INDEX_VARIABLES:
            continue
        if name.startswith("GO") and name != "GOPROXY":
            if name != "GOFLAGS" or "insecure" in value:
                ctx.approval(
                    UNTRUSTED_PACKAGE, f"turns off Go's checksum or TLS checks ({name})", cmd.source
                )
                return
            continue
        if name == "PIP_TRUSTED_HOST" or any(
            untrusted_source(v) for v in re.split(r"[\s,|]+", value) if v not in ("direct", "off")
        ):
            ctx.approval(
                UNTRUSTED_PACKAGE, f"points package installs at {value} ({name})", cmd.source
            )
            return
