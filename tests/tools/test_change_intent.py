"""Which tool calls get a checkpoint first: the local "may write" rule errs towards yes."""

from __future__ import annotations

import pytest

from herald.tools import change_intent, command_may_write


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat README.md | head -20",
        "grep -rn TODO src && wc -l src/*.py",
        "find . -name x.py -type f",
        "pwd; echo done",
        "diff a.txt b.txt",
    ],
)
def test_known_read_only_commands_need_no_checkpoint(command: str):
    assert not command_may_write(command)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf src",
        "git clean -fdx",
        "git reset --hard HEAD~1",
        "git status",  # a repository's config can make git run any program
        "find . -name '*.py' -delete",
        "find . -name x -delete",
        "find . -exec rm {} +",
        "python -c \"import shutil; shutil.rmtree('src')\"",
        "echo hi > notes.txt",
        "cat a >> b",
        "ls $(rm -rf x)",
        "ls `touch x`",
        "PATH=/tmp/evil ls",
        "LD_PRELOAD=/tmp/x.so cat a",
        "rg --pre ./wipe.sh TODO",
        "sort -o out.txt in.txt",
        "uniq in.txt out.txt",
        "tee out.txt",
        "cat a | sh",
        "ls\nrm -rf src",
        "ls && truncate -s0 f",
        "make",
        "npm install",
        "cp a b",
        "mv a b",
        "sed -i s/a/b/ f",
        "echo 'x' ; dd if=/dev/zero of=f",
        "env rm -rf x",
        "xargs rm < list",
        "/bin/rm -rf x",
        "\\rm x",
    ],
)
def test_commands_that_may_write_get_a_checkpoint(command: str):
    assert command_may_write(command)


def test_file_tools_and_writing_commands_are_changes_and_reads_are_not():
    assert change_intent("write_file", ("path",), {"path": "a"}).command is None  # type: ignore[union-attr]
    assert change_intent("my_plugin_tool", ("target",), {}) is not None  # any writes= tool
    assert change_intent("read_file", (), {"path": "a"}) is None
    assert change_intent("terminal", (), {"command": "ls"}) is None
    assert change_intent("terminal", (), {"command": "rm x"}).command == "rm x"  # type: ignore[union-attr]
    assert change_intent("terminal", (), {"command": 5}) is not None  # odd input: checkpoint
    assert change_intent("process", (), {"action": "write", "input": "rm -rf x\n"}) is not None
    assert change_intent("process", (), {"action": "log", "id": "p1"}) is None
