"""The hard-line floor: every family, in every spelling we know of.

Commands here are only analysed as strings; nothing is executed.
"""

from __future__ import annotations

import pytest

from herald.safety import RULE_CATALOGUE, check_command

DELETE_ROOT = "hardline.delete_root"
DELETE_SYSTEM = "hardline.delete_system_dir"
DELETE_HOME = "hardline.delete_home"
MKFS = "hardline.mkfs"
DEVICE = "hardline.block_device_write"
FORK = "hardline.fork_bomb"
KILL_ALL = "hardline.kill_all"
SHUTDOWN = "hardline.shutdown"

RECURSIVE_DELETE = [
    ("rm -rf /", DELETE_ROOT),
    ("rm -rf /*", DELETE_ROOT),
    ("rm -rf //", DELETE_ROOT),
    ("rm -rf /.", DELETE_ROOT),
    ("rm -rf /./", DELETE_ROOT),
    ("rm -rf /usr/..", DELETE_ROOT),
    ("rm -rf /u*", DELETE_ROOT),
    ("rm -rf /*/*", DELETE_ROOT),
    ("rm -fr /", DELETE_ROOT),
    ("rm -Rf /", DELETE_ROOT),
    ("rm -rfv /", DELETE_ROOT),
    ("rm -r /", DELETE_ROOT),
    ("rm -r -f /", DELETE_ROOT),
    ("rm --recursive --force /", DELETE_ROOT),
    ("rm -rf -- /", DELETE_ROOT),
    ("rm -rf --no-preserve-root /", DELETE_ROOT),
    ("rm / -rf", DELETE_ROOT),
    ("rm -f /*", DELETE_ROOT),
    ("rm -rf /usr", DELETE_SYSTEM),
    ("rm -rf /usr/", DELETE_SYSTEM),
    ("rm -rf /etc", DELETE_SYSTEM),
    ("rm -rf /var/lib", DELETE_SYSTEM),
    ("rm -rf /usr/local/bin", DELETE_SYSTEM),
    ("rm -rf /boot", DELETE_SYSTEM),
    ("rm -rf /home", DELETE_SYSTEM),
    ("rm -rf /System", DELETE_SYSTEM),
    ("rm -rf /tmp", DELETE_SYSTEM),
    ("rm -rf /usr/*", DELETE_SYSTEM),
    ("rm -rf ~/..", DELETE_SYSTEM),
    ("rm /usr/bin/*", DELETE_SYSTEM),
    ("rm -rf ~", DELETE_HOME),
    ("rm -rf ~/", DELETE_HOME),
    ("rm -rf ~/.", DELETE_HOME),
    ("rm -rf ~/*", DELETE_HOME),
    ("rm -rf ~/.*", DELETE_HOME),
    ("rm -rf $HOME", DELETE_HOME),
    ("rm -rf ${HOME}", DELETE_HOME),
    ('rm -rf "$HOME"', DELETE_HOME),
    ('rm -rf "$HOME/"', DELETE_HOME),
    ("rm -rf $HOME/*", DELETE_HOME),
    ("rm -rf /home/alice", DELETE_HOME),
    ("rm -rf /home/*", DELETE_HOME),
    ("rm -rf /Users/bob", DELETE_HOME),
    ("rm -rf ~bob", DELETE_HOME),
    ("rm -rf /root/", DELETE_HOME),
    ("rm -rf ~root", DELETE_HOME),
    ("rm -rf build /", DELETE_ROOT),
    ("find / -delete", DELETE_ROOT),
    ("find / -exec rm -rf {} +", DELETE_ROOT),
    ("find ~ -type f -delete", DELETE_HOME),
    ("find /etc -delete", DELETE_SYSTEM),
    ("find /usr -type f -exec rm {} +", DELETE_SYSTEM),
    ("rsync -a --delete empty/ /", DELETE_ROOT),
    ("rsync -a --delete empty/ ~/", DELETE_HOME),
]

DISKS = [
    ("mkfs /dev/sdb1", MKFS),
    ("mkfs.ext4 /dev/sdb1", MKFS),
    ("mkfs.vfat -F 32 /dev/mmcblk0p1", MKFS),
    ("mkfs -t xfs /dev/nvme0n1p2", MKFS),
    ("mke2fs -j /dev/sdc", MKFS),
    ("sudo mkfs.btrfs -f /dev/sda", MKFS),
    ("wipefs -a /dev/sda", MKFS),
    ("wipefs --all /dev/nvme0n1", MKFS),
    ("diskutil eraseDisk JHFS+ Blank disk2", MKFS),
    ("newfs_apfs /dev/disk3", MKFS),
    ("dd if=/dev/zero of=/dev/sda", DEVICE),
    ("dd if=/dev/urandom of=/dev/nvme0n1 bs=1M", DEVICE),
    ("dd if=image.iso of=/dev/disk2 bs=4m", DEVICE),
    ("sudo dd of=/dev/sdb if=/dev/zero", DEVICE),
    ("dd if=x of=/dev/mapper/vg-root", DEVICE),
    ("dd if=x of=/dev/mem", DEVICE),
    ("cat image.iso > /dev/sdb", DEVICE),
    ("echo x >> /dev/sda1", DEVICE),
    ("head -c 1M /dev/zero > /dev/vda", DEVICE),
    ("cat x 1>/dev/xvda", DEVICE),
    ("pv img &> /dev/sdc", DEVICE),
    ("tee /dev/sda < img", DEVICE),
    ("cp disk.img /dev/mmcblk0", DEVICE),
    ("shred -n 3 /dev/sda", DEVICE),
    ("blkdiscard /dev/nvme0n1", DEVICE),
    ("mkswap /dev/sda2", DEVICE),
    ("nvme format /dev/nvme0n1", DEVICE),
    ("hdparm --security-erase pass /dev/sda", DEVICE),
]

FORK_BOMBS = [
    (":(){ :|:& };:", FORK),
    (":(){ :|: & };:", FORK),
    ("bomb() { bomb | bomb & }; bomb", FORK),
    ("f(){ f|f& }; f", FORK),
    ("function g { g | g & }; g", FORK),
    ("bash -c ':(){ :|:& };:'", FORK),
    ("perl -e 'fork while fork'", FORK),
    ("python3 -c 'import os\nwhile True: os.fork()'", FORK),
]

PROCESSES = [
    ("kill -9 -1", KILL_ALL),
    ("kill -KILL -1", KILL_ALL),
    ("kill -SIGKILL -1", KILL_ALL),
    ("kill -s KILL -1", KILL_ALL),
    ("kill -s 9 -1", KILL_ALL),
    ("kill -- -1", KILL_ALL),
    ("kill -TERM -- -1", KILL_ALL),
    ("sudo kill -9 -1", KILL_ALL),
    ("killall5", KILL_ALL),
    ("killall5 -9", KILL_ALL),
]

POWER = [
    ("shutdown", SHUTDOWN),
    ("shutdown -h now", SHUTDOWN),
    ("shutdown -r +5", SHUTDOWN),
    ("sudo shutdown now", SHUTDOWN),
    ("reboot", SHUTDOWN),
    ("reboot -f", SHUTDOWN),
    ("halt", SHUTDOWN),
    ("poweroff", SHUTDOWN),
    ("/sbin/reboot", SHUTDOWN),
    ("init 0", SHUTDOWN),
    ("init 6", SHUTDOWN),
    ("telinit 0", SHUTDOWN),
    ("telinit 6", SHUTDOWN),
    ("systemctl poweroff", SHUTDOWN),
    ("systemctl reboot", SHUTDOWN),
    ("systemctl halt", SHUTDOWN),
    ("systemctl kexec", SHUTDOWN),
    ("systemctl --force reboot", SHUTDOWN),
    ("systemctl -i poweroff", SHUTDOWN),
    ("systemctl start reboot.target", SHUTDOWN),
    ("systemctl isolate poweroff.target", SHUTDOWN),
    ("echo b > /proc/sysrq-trigger", SHUTDOWN),
    ("echo o | sudo tee /proc/sysrq-trigger", SHUTDOWN),
    ("kexec -e", SHUTDOWN),
    (
        "dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.PowerOff boolean:true",
        SHUTDOWN,
    ),
]


CARRIERS = [
    ('bash -c "rm -rf /"', DELETE_ROOT),
    ("sh -c 'rm -rf ~'", DELETE_HOME),
    ("zsh -c 'reboot'", SHUTDOWN),
    ("dash -c 'mkfs.ext4 /dev/sda'", MKFS),
    ("ksh -c 'kill -9 -1'", KILL_ALL),
    ("bash -lc 'rm -rf /'", DELETE_ROOT),
    ("bash --norc -c 'rm -rf /'", DELETE_ROOT),
    ("bash -c -- 'rm -rf /'", DELETE_ROOT),
    ("bash -c \"sh -c 'rm -rf /'\"", DELETE_ROOT),
    ('bash -c "bash -c \\"bash -c \'rm -rf /\'\\""', DELETE_ROOT),
    ("eval 'rm -rf /'", DELETE_ROOT),
    ("eval rm -rf /", DELETE_ROOT),
    ('eval "$(echo rm -rf /)"', DELETE_ROOT),
    ("su -c 'rm -rf /'", DELETE_ROOT),
    ("su root -c 'rm -rf /'", DELETE_ROOT),
    ("su - -c reboot", SHUTDOWN),
    ("su --command='rm -rf /'", DELETE_ROOT),
    ("sudo su -c 'rm -rf /'", DELETE_ROOT),
    ("runuser -u root -- rm -rf /", DELETE_ROOT),
    ("env -S 'rm -rf /'", DELETE_ROOT),
    ("env --split-string='rm -rf /'", DELETE_ROOT),
    ('env -S"rm -rf /"', DELETE_ROOT),
    ("echo 'rm -rf /' | sh", DELETE_ROOT),
    ("echo 'rm -rf /' | bash -s", DELETE_ROOT),
    ("printf 'rm -rf /' | sudo bash", DELETE_ROOT),
    ("printf '%s' 'reboot' | sh", SHUTDOWN),
    ("bash <<< 'rm -rf /'", DELETE_ROOT),
    ("bash <<EOF\nrm -rf /\nEOF", DELETE_ROOT),
    ("sh <<'X'\nreboot\nX", SHUTDOWN),
    ("source <(echo 'rm -rf /')", DELETE_ROOT),
    (". <(echo 'rm -rf ~')", DELETE_HOME),
    ("bash <(echo 'reboot')", SHUTDOWN),
    ("echo cm0gLXJmIC8K | base64 -d | bash", DELETE_ROOT),
    ("echo cm0gLXJmIC8K | base64 --decode | sh", DELETE_ROOT),
    ("base64 -d <<< cm0gLXJmIC8K | bash", DELETE_ROOT),
    ("echo '/ fr- mr' | rev | sh", DELETE_ROOT),
    ("alias ls='rm -rf /'", DELETE_ROOT),
    ("trap 'rm -rf ~' EXIT", DELETE_HOME),
    ("watch 'rm -rf /'", DELETE_ROOT),
    ("watch -n 5 reboot", SHUTDOWN),
    ("ssh host 'rm -rf /'", DELETE_ROOT),
    ("ssh -p 2222 -i k.pem user@host sudo reboot", SHUTDOWN),
    ("flock /tmp/lock -c 'rm -rf /'", DELETE_ROOT),
    ("xargs sh -c 'rm -rf /' < list", DELETE_ROOT),
    ("find . -exec sh -c 'rm -rf /' \\;", DELETE_ROOT),
    ("echo 'reboot' | at now", SHUTDOWN),
    ("python -c 'import os; os.system(\"rm -rf /\")'", DELETE_ROOT),
    ("python3 -c \"import subprocess; subprocess.run(['rm', '-rf', '/'])\"", DELETE_ROOT),
    ("python3 - <<'PY'\nimport os\nos.system('rm -rf ~')\nPY", DELETE_HOME),
    ('node -e \'require("child_process").execSync("rm -rf ~")\'', DELETE_HOME),
    ("perl -e 'system(\"reboot\")'", SHUTDOWN),
    ("perl -e '`rm -rf /`'", DELETE_ROOT),
    ("ruby -e 'system(\"rm -rf /\")'", DELETE_ROOT),
    ("php -r 'shell_exec(\"rm -rf /\");'", DELETE_ROOT),
    ("awk 'BEGIN{system(\"rm -rf /\")}'", DELETE_ROOT),
    ("X='rm -rf /'; bash -c \"$X\"", DELETE_ROOT),
    ("CMD=reboot; eval $CMD", SHUTDOWN),
]

OBFUSCATION = [
    ("ｒｍ -rf /", DELETE_ROOT),
    ("ｒｍ　-rf　/", DELETE_ROOT),
    ("r''m -rf /", DELETE_ROOT),
    ('r""m -rf /', DELETE_ROOT),
    ("r\\m -rf /", DELETE_ROOT),
    ("\\rm -rf /", DELETE_ROOT),
    ("'rm' -rf /", DELETE_ROOT),
    ('"rm" "-rf" "/"', DELETE_ROOT),
    ("rm -r''f /", DELETE_ROOT),
    ("rm${IFS}-rf${IFS}/", DELETE_ROOT),
    ("rm$IFS-rf$IFS/", DELETE_ROOT),
    ("rm${IFS:0:1}-rf${IFS:0:1}/", DELETE_ROOT),
    ("\x1b[31mrm\x1b[0m -rf /", DELETE_ROOT),
    ("rm\x00 -rf /", DELETE_ROOT),
    ("r\x00m -rf /", DELETE_ROOT),
    ("rm -rf \\\n/", DELETE_ROOT),
    ("r\\\nm -rf /", DELETE_ROOT),
    ("/bin/rm -rf /", DELETE_ROOT),
    ("/usr/bin/rm -rf ~", DELETE_HOME),
    ("RM -rf /", DELETE_ROOT),
    ("command rm -rf /", DELETE_ROOT),
    ("builtin eval 'rm -rf /'", DELETE_ROOT),
    ("exec rm -rf /", DELETE_ROOT),
    ("sudo rm -rf /", DELETE_ROOT),
    ("sudo -u root rm -rf /", DELETE_ROOT),
    ("sudo -E -H -u root -- rm -rf /", DELETE_ROOT),
    ("doas rm -rf /", DELETE_ROOT),
    ("env rm -rf /", DELETE_ROOT),
    ("env -i PATH=/bin rm -rf /", DELETE_ROOT),
    ("LANG=C rm -rf /", DELETE_ROOT),
    ("nohup rm -rf / &", DELETE_ROOT),
    ("nice -n 19 rm -rf /", DELETE_ROOT),
    ("nice -10 rm -rf /", DELETE_ROOT),
    ("ionice -c3 rm -rf /", DELETE_ROOT),
    ("timeout 5 rm -rf /", DELETE_ROOT),
    ("timeout -s KILL 10s rm -rf /", DELETE_ROOT),
    ("time rm -rf /", DELETE_ROOT),
    ("time -p rm -rf /", DELETE_ROOT),
    ("setsid rm -rf /", DELETE_ROOT),
    ("stdbuf -oL rm -rf /", DELETE_ROOT),
    ("busybox rm -rf /", DELETE_ROOT),
    ("xargs -0 rm -rf / < list", DELETE_ROOT),
    ("chroot /mnt rm -rf /", DELETE_ROOT),
    ("sudo nohup nice timeout 9 rm -rf /", DELETE_ROOT),
    ("x=/; rm -rf $x", DELETE_ROOT),
    ("A=rm B=-rf; $A $B /", DELETE_ROOT),
    ("export T=~; rm -rf $T", DELETE_HOME),
    ("{rm,-rf,/}", DELETE_ROOT),
    ("rm -rf /{usr,etc}", DELETE_SYSTEM),
    ("$(echo rm) -rf /", DELETE_ROOT),
    ("`echo rm` -rf /", DELETE_ROOT),
    ("$(printf 'rm') -rf /", DELETE_ROOT),
    ("$'\\x72\\x6d' -rf /", DELETE_ROOT),
    ("$'\\162\\155' -rf /", DELETE_ROOT),
    ("rm -rf $'\\x2f'", DELETE_ROOT),
    ("echo; rm -rf /", DELETE_ROOT),
    ("true && rm -rf /", DELETE_ROOT),
    ("false || rm -rf /", DELETE_ROOT),
    ("ls | rm -rf /", DELETE_ROOT),
    ("ls |& rm -rf /", DELETE_ROOT),
    ("sleep 1 & rm -rf /", DELETE_ROOT),
    ("ls\nrm -rf /", DELETE_ROOT),
    ("(rm -rf /)", DELETE_ROOT),
    ("{ rm -rf /; }", DELETE_ROOT),
    ("! rm -rf /", DELETE_ROOT),
    ("if true; then rm -rf /; fi", DELETE_ROOT),
    ("while true; do rm -rf /; done", DELETE_ROOT),
    ("for i in 1; do rm -rf ~; done", DELETE_HOME),
    ("case x in x) rm -rf /;; esac", DELETE_ROOT),
    ("echo $(rm -rf /)", DELETE_ROOT),
    ('echo "$(rm -rf /)"', DELETE_ROOT),
    ('echo "`reboot`"', SHUTDOWN),
    ("echo ${x:-$(rm -rf /)}", DELETE_ROOT),
    ("cat <(rm -rf /)", DELETE_ROOT),
    ("diff >(reboot) x", SHUTDOWN),
    ("cat <<EOF > f\n$(rm -rf ~)\nEOF", DELETE_HOME),
    ("f() { rm -rf /; }; f", DELETE_ROOT),
    ("cd / && rm -rf *", DELETE_ROOT),
    ("cd ~ && rm -rf ./*", DELETE_HOME),
    ("cd /usr; rm -rf lib", DELETE_SYSTEM),
    ("cd /home/alice/src && rm -rf ..", DELETE_HOME),
    ("pushd / && rm -rf .", DELETE_ROOT),
    ("echo / | xargs rm -rf", DELETE_ROOT),
    ("printf '%s\\n' ~ | xargs -n1 rm -rf", DELETE_HOME),
    ("python3 -c 'import shutil; shutil.rmtree(\"/\")'", DELETE_ROOT),
    ("python3 -c 'import shutil, pathlib; shutil.rmtree(pathlib.Path.home())'", DELETE_HOME),
    ('node -e \'require("fs").rmSync("/usr", {recursive: true})\'', DELETE_SYSTEM),
    ('ruby -e \'require "fileutils"; FileUtils.rm_rf("/")\'', DELETE_ROOT),
]


def _cases(*tables: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [case for table in tables for case in table]


@pytest.mark.parametrize(
    ("command", "rule"),
    _cases(RECURSIVE_DELETE, DISKS, FORK_BOMBS, PROCESSES, POWER),
)
def test_hardline_families(command: str, rule: str) -> None:
    verdict = check_command(command)
    assert verdict.level == "hardline", (command, verdict)
    assert verdict.rule == rule, (command, verdict)
    assert verdict.description


@pytest.mark.parametrize(("command", "rule"), CARRIERS)
def test_carrier_payloads_are_code(command: str, rule: str) -> None:
    verdict = check_command(command)
    assert (verdict.level, verdict.rule) == ("hardline", rule), (command, verdict)


@pytest.mark.parametrize(("command", "rule"), OBFUSCATION)
def test_obfuscated_spellings(command: str, rule: str) -> None:
    verdict = check_command(command)
    assert (verdict.level, verdict.rule) == ("hardline", rule), (command, verdict)


def test_every_rule_id_is_catalogued() -> None:
    seen = {
        check_command(c).rule
        for c, _ in _cases(RECURSIVE_DELETE, DISKS, FORK_BOMBS, PROCESSES, POWER)
    }
    assert seen <= set(RULE_CATALOGUE)
    assert all(level in ("hardline", "approval") for level, _ in RULE_CATALOGUE.values())


def test_hardline_beats_approval_in_one_command() -> None:
    verdict = check_command("git push --force && rm -rf /")
    assert verdict.rule == DELETE_ROOT
    assert "dangerous.git_destructive" in verdict.rules
    assert verdict.rules[0] == DELETE_ROOT


def test_sudo_stdin_needs_approval_and_never_lifts_the_hard_line() -> None:
    # sudo -S is approval-level (issue 14), with or without a configured password
    env = {"HERALD_SUDO_PASSWORD": "x"}
    assert check_command("sudo -S apt-get update", env=env).rule == "dangerous.sudo_stdin"
    assert check_command("sudo -S apt-get update").rule == "dangerous.sudo_stdin"
    # the destructive payload behind it stays a hard line
    assert check_command("sudo -S rm -rf /", env=env).rule == DELETE_ROOT


def test_env_home_is_recognised() -> None:
    env = {"HOME": "/Users/carol"}
    assert check_command("rm -rf /Users/carol", env=env).rule == DELETE_HOME
    assert check_command("rm -rf /Users/carol/", env=env).rule == DELETE_HOME
    assert check_command("rm -rf /Users/carol/project/build", env=env).level == "approval"


def test_working_directory_from_env() -> None:
    assert check_command("rm -rf *", env={"PWD": "/"}).rule == DELETE_ROOT
    assert check_command("rm -rf .", env={"PWD": "/home/dan"}).rule == DELETE_HOME
    assert check_command("rm -rf build", env={"PWD": "/home/dan/app"}).level == "approval"
    assert check_command("cd src && rm -rf *", env={"PWD": "/"}).level == "approval"
    # an unknown directory after cd - or cd $VAR: relative deletes need approval
    assert check_command("cd - && rm -rf *", env={"PWD": "/srv/app"}).level == "approval"


def test_env_variables_are_expanded() -> None:
    assert check_command("rm -rf $TARGET", env={"TARGET": "/"}).rule == DELETE_ROOT
    assert check_command("rm -rf $TARGET").level == "approval"
