"""Issue 14, commands: payloads behind carriers, GNU long-option prefixes,
command names from parameter expansion, sudo reading a password.

Every case states the verdict level and the rule id that must decide it.
"""

from __future__ import annotations

import pytest

from herald.safety import RULE_CATALOGUE, check_command

ROOT = "hardline.delete_root"
HOME = "hardline.delete_home"
SYSTEM = "hardline.delete_system_dir"
MKFS = "hardline.mkfs"
SHUTDOWN = "hardline.shutdown"
DEVICE = "hardline.block_device_write"

# Shell options before -c, in every spelling bash accepts.
SHELL_OPTIONS = [
    ("bash +O extglob -lc 'rm -rf --no-preserve-root /'", ROOT),
    ("bash -O extglob -c 'rm -rf /'", ROOT),
    ("bash -o pipefail -c 'rm -rf /'", ROOT),
    ("bash +o posix -c 'rm -rf /'", ROOT),
    ("bash +e -c 'rm -rf ~'", HOME),
    ("bash +xv -c 'rm -rf /'", ROOT),
    ("sh -euxc 'rm -rf /'", ROOT),
    ("bash -lic 'mkfs.ext4 /dev/sda'", MKFS),
    ("zsh -f -c 'rm -rf ~'", HOME),
    ("bash --norc --noprofile -c 'rm -rf /'", ROOT),
    ("bash --rcfile /dev/null -c 'rm -rf /'", ROOT),
    ("bash -c -- 'rm -rf /'", ROOT),
    ("dash -e -o nounset -c 'reboot'", SHUTDOWN),
    ("bash +O nullglob +O dotglob -o errexit -c 'rm -rf /usr'", SYSTEM),
    ("sudo bash +O extglob -c 'rm -rf /'", ROOT),
    ("env -i bash +o history -c 'rm -rf /'", ROOT),
    ('bash -O extglob +x -c "rm -rf /"', ROOT),
    ('sh -c "rm -rf /" -- x', ROOT),
]

# Options of otherwise read-only tools whose value is run as a command.
EXEC_OPTIONS = [
    ("man -P 'rm -rf /' ls", ROOT),
    ("man -P'rm -rf ~' ls", HOME),
    ("man --pager='rm -rf /' ls", ROOT),
    ("man --pager 'sh -c \"rm -rf /\"' ls", ROOT),
    ("man --pag='rm -rf /' ls", ROOT),
    ("man -H'rm -rf /' ls", ROOT),
    ("rg --pre 'rm -rf /' foo", ROOT),
    ("rg --pre='rm -rf ~' foo .", HOME),
    ("rg -i --pre 'mkfs.ext4 /dev/sda' x", MKFS),
    ("sort --compress-program='rm -rf /' big.txt", ROOT),
    ("sort --compress-program 'rm -rf ~' big.txt", HOME),
    ("ag --pager 'rm -rf /' foo", ROOT),
    ("ag --pager='reboot' foo", SHUTDOWN),
    ("git -c core.pager='rm -rf /' log", ROOT),
    ("git -c core.sshCommand='rm -rf ~' fetch", HOME),
    ("git -c 'core.sshcommand=rm -rf /' pull", ROOT),
    ("git -c alias.x='!rm -rf /' x", ROOT),
    ("git -c 'alias.co=!sh -c \"rm -rf /\"' co", ROOT),
    ("git -c core.editor='rm -rf /' commit", ROOT),
    ("git -c core.fsmonitor='rm -rf ~' status", HOME),
    ("git -c credential.helper='!rm -rf /' push", ROOT),
    ("git -c diff.external='rm -rf /' diff", ROOT),
    ("git --config-env=core.pager=X -c core.pager='reboot' log", SHUTDOWN),
    ("git -C repo -c core.pager='rm -rf /' log", ROOT),
    ("LESSOPEN='|rm -rf / %s' less notes.txt", ROOT),
    ("LESSOPEN='||rm -rf ~ %s' less notes.txt", HOME),
    ("env LESSOPEN='|reboot %s' less notes.txt", SHUTDOWN),
    ("GIT_PAGER='rm -rf /' git log", ROOT),
    ("PAGER='rm -rf /' man ls", ROOT),
    ("MANPAGER='rm -rf ~' man ls", HOME),
    ("GIT_SSH_COMMAND='rm -rf /' git fetch", ROOT),
    ("GIT_EDITOR='rm -rf /' git commit", ROOT),
    ("env GIT_SSH_COMMAND='rm -rf /' git fetch", ROOT),
    ("PROMPT_COMMAND='rm -rf /' bash -i", ROOT),
    ("tar --to-command='rm -rf /' -xf a.tar", ROOT),
    ("tar -I 'rm -rf ~' -xf a.tar", HOME),
    ("tar --use-compress-program='rm -rf /' -cf a.tar x", ROOT),
    ("tar --checkpoint=1 --checkpoint-action=exec='rm -rf /' -cf a.tar x", ROOT),
    ("rsync -e 'sh -c \"rm -rf /\"' a host:b", ROOT),
    ("rsync --rsh='rm -rf ~' a host:b", HOME),
    ("ssh -o ProxyCommand='rm -rf /' host", ROOT),
    ("ssh -oProxyCommand='rm -rf ~' host", HOME),
    ("vim -c ':!rm -rf /' notes.txt", ROOT),
    ("zip -T -TT 'rm -rf /' a.zip f", ROOT),
    ('git -c core.pager="rm -rf /" -p log', ROOT),
    ("export PAGER='rm -rf /'; man ls", ROOT),
    ('ssh -o "ProxyCommand rm -rf /" h', ROOT),
]

# find and xargs run their argument commands.
FIND_XARGS = [
    ("find . -exec rm -rf / \\;", ROOT),
    ("find . -execdir rm -rf / \\;", ROOT),
    ("find . -ok rm -rf ~ \\;", HOME),
    ("find . -okdir rm -rf /usr \\;", SYSTEM),
    ("find . -name x -exec rm -rf / {} +", ROOT),
    ("find . -exec sh -c 'rm -rf /' \\;", ROOT),
    ("find . -exec bash +O extglob -c 'rm -rf /' \\;", ROOT),
    ("find /tmp -exec mkfs.ext4 /dev/sda \\;", MKFS),
    ("find . -exec sudo rm -rf / \\;", ROOT),
    ("find . -type f -exec reboot \\;", SHUTDOWN),
    ("xargs rm -rf / < list.txt", ROOT),
    ("xargs -I{} sh -c 'rm -rf /' < list.txt", ROOT),
    ("xargs -0 -n1 bash -c 'rm -rf ~'", HOME),
    ("echo / | xargs rm -rf", ROOT),
    ("printf '%s\\n' /usr | xargs rm -rf", SYSTEM),
    ("ls | xargs -r env -S 'rm -rf /'", ROOT),
    ("xargs -a list.txt sh -c 'reboot'", SHUTDOWN),
    ('xargs -I % sh -c "rm -rf /"', ROOT),
    ("timeout 5 xargs rm -rf /", ROOT),
]

ENV_SPLIT = [
    ("env -S 'rm -rf /'", ROOT),
    ("env -S'rm -rf /'", ROOT),
    ("env --split-string='rm -rf ~'", HOME),
    ("env --split='rm -rf /'", ROOT),
    ("env -iS 'rm -rf /'", ROOT),
    ("env -u X -S 'rm -rf /'", ROOT),
    ("env -S 'sh -c \"rm -rf /\"'", ROOT),
]

# GNU long options abbreviated to any unambiguous prefix.
ABBREVIATIONS = [
    ("git push --forc origin main", "approval", "dangerous.git_destructive"),
    ("git push --force-w origin main", "approval", "dangerous.git_destructive"),
    ("git push --mirr", "approval", "dangerous.git_destructive"),
    ("git push --del origin stale", "approval", "dangerous.git_destructive"),
    ("git reset --har", "approval", "dangerous.git_destructive"),
    ("git reset --ha HEAD~1", "approval", "dangerous.git_destructive"),
    ("git clean --forc -d", "approval", "dangerous.git_destructive"),
    ("git branch --del --forc feature", "approval", "dangerous.git_destructive"),
    ("chown --recur me /usr", "approval", "dangerous.recursive_permissions"),
    ("chmod --recu 755 /etc", "approval", "dangerous.recursive_permissions"),
    ("chgrp --rec staff /var", "approval", "dangerous.recursive_permissions"),
    ("rm --recur --forc /", "hardline", ROOT),
    ("rm --rec ~", "hardline", HOME),
    ("rm --forc notes.txt other.txt", "approval", "dangerous.delete"),
    ("rsync -a --del empty/ ~/", "hardline", HOME),
    ("rsync -a --delete-af empty/ /usr/", "hardline", SYSTEM),
    ("sudo --stdi apt-get update", "approval", "dangerous.sudo_stdin"),
    ("sudo --std apt-get update", "approval", "dangerous.sudo_stdin"),
    ("sudo --askp apt-get update", "approval", "dangerous.sudo_stdin"),
    ("wipefs --al /dev/sda", "hardline", MKFS),
    ("shutdown --help", "allow", "allow"),
    ("git push --follow-tags", "allow", "allow"),
    ("git push --no-verify origin main", "allow", "allow"),
    ("git reset --soft HEAD~1", "allow", "allow"),
    ("git reset --mixed", "allow", "allow"),
    ("chmod --verb 644 notes.txt", "allow", "allow"),
    ("git push origin --forc", "approval", "dangerous.git_destructive"),
    ("sudo -u root --stdin ls", "approval", "dangerous.sudo_stdin"),
]

# Command names that come out of a parameter expansion.
EXPANDED_NAMES = [
    ("${unset:-rm} -rf /home/victim", "hardline", HOME),
    ("${X:-rm} -rf /", "hardline", ROOT),
    ("${X-rm} -rf ~", "hardline", HOME),
    ("${X:=rm} -rf /", "hardline", ROOT),
    ("${X:+rm} -rf /", "hardline", ROOT),
    ('"${X:-rm}" -rf /', "hardline", ROOT),
    ("${X:-r}m -rf /", "hardline", ROOT),
    ("r${X}m -rf /", "hardline", ROOT),
    ("${X:-$'\\x72m'} -rf /", "hardline", ROOT),
    ("$'\\x72m' -rf /", "hardline", ROOT),
    ("$'\\162m' -rf /", "hardline", ROOT),
    ("${X:-reboot}", "hardline", SHUTDOWN),
    ("sudo ${X:-rm} -rf /", "hardline", ROOT),
    ("${X:-git} push --force", "approval", "dangerous.git_destructive"),
    ("$CMD -rf /", "approval", "dangerous.dynamic_command"),
    ("${!ref} -rf /", "approval", "dangerous.dynamic_command"),
    ("${X/a/b} file", "approval", "dangerous.dynamic_command"),
    ("$(cat cmd.txt) -rf /", "approval", "dangerous.dynamic_command"),
    ("`cat cmd.txt` x", "approval", "dangerous.dynamic_command"),
    ("sudo $CMD", "approval", "dangerous.dynamic_command"),
    ("${PAGER:-less} README.md", "approval", "dangerous.dynamic_command"),
    ("nohup ${CMD:-rm} -rf / &", "hardline", ROOT),
    ("${X:-${Y:-rm}} -rf /", "hardline", ROOT),
    ("$X$Y -rf /", "approval", "dangerous.dynamic_command"),
    ("((i++))", "allow", "allow"),
    ('eval "$(ssh-agent -s)"', "allow", "allow"),
]

SUDO_PASSWORD = [
    ("sudo -S apt-get update", "approval", "dangerous.sudo_stdin"),
    ("sudo --stdin apt-get update", "approval", "dangerous.sudo_stdin"),
    ("sudo -A apt-get update", "approval", "dangerous.sudo_stdin"),
    ("sudo --askpass systemctl status x", "approval", "dangerous.sudo_stdin"),
    ("echo pw | sudo -S -u root true", "approval", "dangerous.sudo_stdin"),
    ("sudo -kS ls", "approval", "dangerous.sudo_stdin"),
    ("sudo -S rm -rf /", "hardline", ROOT),
    ("sudo -A mkfs.ext4 /dev/sdb", "hardline", MKFS),
]


def _hard(cases: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    return [(c, "hardline", r) for c, r in cases]


ALL = [
    *_hard(SHELL_OPTIONS),
    *_hard(EXEC_OPTIONS),
    *_hard(FIND_XARGS),
    *_hard(ENV_SPLIT),
    *ABBREVIATIONS,
    *EXPANDED_NAMES,
    *SUDO_PASSWORD,
]


@pytest.mark.parametrize(("command", "level", "rule"), ALL)
def test_verdict_and_rule(command: str, level: str, rule: str) -> None:
    verdict = check_command(command)
    assert (verdict.level, verdict.rule) == (level, rule), (command, verdict)
    if level != "allow":
        assert rule in RULE_CATALOGUE
        assert verdict.description


@pytest.mark.parametrize("env", [{"HERALD_SUDO_PASSWORD": "x"}, {}, None])
def test_sudo_stdin_is_approval_with_or_without_a_password(env: dict[str, str] | None) -> None:
    verdict = check_command("sudo -S apt-get update", env=env)
    assert (verdict.level, verdict.rule) == ("approval", "dangerous.sudo_stdin")
    assert "password" in verdict.description


def test_expanded_name_from_env_is_used() -> None:
    assert check_command("${X:-ls} -la", env={"X": "rm"}).level == "approval"
    assert check_command("${X:-ls} -rf /", env={"X": "rm"}).rule == ROOT
    assert check_command("$CMD status", env={"CMD": "git"}).level == "allow"


def test_carrier_payload_is_named_in_the_verdict() -> None:
    verdict = check_command("man -P 'rm -rf /' ls")
    assert "(/)" in verdict.description
    assert verdict.segment == "rm -rf /"
