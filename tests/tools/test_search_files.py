"""search_files: content regex and file-name globs; ripgrep, the Python walk and grep/find
on a real tree in tmp_path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_file_support import call, err, make_ctx, make_registry, ok

from herald.environments.local import LocalEnvironment
from herald.tools.file_search import MAX_LINE_CHARS, glob_matches, glob_regex, rg_available
from herald.tools.registry import ToolContext
from herald.tools.search_files import MAX_MATCHES, format_outcome, run_search

HAS_RG = shutil.which("rg") is not None
needs_rg = pytest.mark.skipif(not HAS_RG, reason="ripgrep (rg) is not installed on this machine")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    return run_app()\n",
        "src/util/helpers.py": "def run_app():\n    return 42\n",
        "src/util/notes.txt": "TODO: run_app docs\n",
        "README.md": "# Demo\nCall run_app() to start.\n",
        "a/z.py": "# run_app sorts before a.py\n",
        "a.py": "run_app = None\n",
        ".config/settings.py": "RUN_APP = 'hidden files are searched'  # run_app\n",
        ".git/hooks/x.py": "run_app in .git\n",
        "node_modules/pkg/index.js": "run_app in node_modules\n",
        ".venv/lib/site.py": "run_app in .venv\n",
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01run_app\x00")
    return tmp_path


@pytest.fixture
def reg():
    return make_registry()


def search(
    ctx: ToolContext, root: Path, mode: str, pattern: str, glob: str | None = None, *, engine: str
):
    return run_search(ctx, str(root), mode, pattern, glob, engine=engine)


@pytest.mark.parametrize("engine", ["python", pytest.param("rg", marks=needs_rg), "grep"])
def test_content_search_skips_ignored_dirs_and_binaries(tree, engine):
    ctx = make_ctx(tree)
    outcome = search(ctx, tree, "content", r"run_app\(\)", engine=engine)
    found = sorted((Path(m.path).relative_to(tree).as_posix(), m.line) for m in outcome.matches)
    assert found == [("README.md", 2), ("src/app.py", 4), ("src/util/helpers.py", 1)]
    assert not outcome.truncated


@pytest.mark.parametrize("engine", ["python", pytest.param("rg", marks=needs_rg), "grep"])
@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.py", [".config/settings.py", "a/z.py", "a.py", "src/app.py", "src/util/helpers.py"]),
        ("src/*.py", ["src/app.py"]),
        ("src/**/*.py", ["src/app.py", "src/util/helpers.py"]),
        ("notes.*", ["src/util/notes.txt"]),
    ],
)
def test_files_glob(tree, engine, pattern, expected):
    ctx = make_ctx(tree)
    outcome = search(ctx, tree, "files", pattern, engine=engine)
    found = [Path(f).relative_to(tree).as_posix() for f in outcome.files]
    if engine == "grep":  # find | sort orders by full path
        found, expected = sorted(found), sorted(expected)
    assert found == expected


def test_tool_output_format_and_relative_paths(reg, tree):
    ctx = make_ctx(tree)
    out = ok(call(reg, ctx, "search_files", pattern=r"run_app\(\)"))
    assert out.split("\n") == [
        "README.md:2: Call run_app() to start.",
        "src/app.py:4:     return run_app()",
        "src/util/helpers.py:1: def run_app():",
    ]
    files = ok(call(reg, ctx, "search_files", pattern="*.txt", mode="files", path="src"))
    assert files == "src/util/notes.txt"


def test_content_glob_filter_and_case_insensitive_regex(reg, tree):
    ctx = make_ctx(tree)
    out = ok(call(reg, ctx, "search_files", pattern="(?i)^run_app", glob="*.py"))
    assert out.split("\n") == [
        "a.py:1: run_app = None",
        ".config/settings.py:1: RUN_APP = 'hidden files are searched'  # run_app",
    ] or out.split("\n") == [
        ".config/settings.py:1: RUN_APP = 'hidden files are searched'  # run_app",
        "a.py:1: run_app = None",
    ]


def test_search_a_single_file_and_no_matches(reg, tree):
    ctx = make_ctx(tree)
    assert ok(call(reg, ctx, "search_files", pattern="42", path="src/util/helpers.py")) == (
        "src/util/helpers.py:2:     return 42"
    )
    assert "No lines matching 'nothing_here'" in ok(
        call(reg, ctx, "search_files", pattern="nothing_here")
    )
    assert "No files named" in ok(call(reg, ctx, "search_files", pattern="*.rs", mode="files"))


def test_bad_arguments(reg, tree):
    ctx = make_ctx(tree)
    assert "does not exist" in err(call(reg, ctx, "search_files", pattern="x", path="nope"))
    assert "mode must be" in err(call(reg, ctx, "search_files", pattern="x", mode="grep"))
    assert "must not be empty" in err(call(reg, ctx, "search_files", pattern=" "))


@pytest.mark.parametrize("engine", ["python", pytest.param("rg", marks=needs_rg)])
def test_invalid_regex_is_reported(tree, engine):
    ctx = make_ctx(tree)
    with pytest.raises(Exception, match=r"(invalid regex|rg failed).*"):
        search(ctx, tree, "content", "foo(", engine=engine)


def test_results_are_bounded_with_a_note(reg, tmp_path):
    (tmp_path / "many.txt").write_text("".join(f"hit {i}\n" for i in range(MAX_MATCHES + 50)))
    (tmp_path / "long.txt").write_text("hit " + "y" * 5000 + "\n")
    ctx = make_ctx(tmp_path)
    for engine in ["python", *(["rg"] if HAS_RG else [])]:
        outcome = search(ctx, tmp_path, "content", "hit", engine=engine)
        assert len(outcome.matches) == MAX_MATCHES and outcome.truncated
        assert outcome.matches[0].path.endswith("long.txt")
        assert len(outcome.matches[0].text) <= MAX_LINE_CHARS + 1
        text = format_outcome(ctx, outcome, "content", "hit", "here")
        assert f"results cut at {MAX_MATCHES} matches in 2 files" in text


@needs_rg
def test_rg_and_python_fallback_return_the_same_results(tree):
    ctx = make_ctx(tree)
    cases = [
        ("content", "run_app", None),
        ("content", r"^\s+return", None),
        ("content", "run_app", "*.py"),
        ("content", "run_app", "src/**"),
        ("files", "*", None),
        ("files", "*.py", None),
        ("files", "src/**", None),
    ]
    for mode, pattern, glob in cases:
        rg = search(ctx, tree, mode, pattern, glob, engine="rg")
        py = search(ctx, tree, mode, pattern, glob, engine="python")
        assert (rg.matches, rg.files) == (py.matches, py.files), (mode, pattern, glob)


class CountingEnvironment(LocalEnvironment):
    """A real local environment that counts the commands it runs."""

    def __init__(self, cwd: str) -> None:
        super().__init__(cwd)
        self.commands: list[str] = []

    def execute(self, command, **kwargs):  # type: ignore[override]
        self.commands.append(command)
        return super().execute(command, **kwargs)


def test_rg_availability_is_checked_once_per_environment(tmp_path):
    env = CountingEnvironment(str(tmp_path))
    assert rg_available(env) is HAS_RG
    assert rg_available(env) is HAS_RG
    assert sum("command -v rg" in c for c in env.commands) == 1
    other = CountingEnvironment(str(tmp_path))
    rg_available(other)
    assert len(other.commands) == 1


def test_handler_picks_rg_when_present(reg, tree):
    env = CountingEnvironment(str(tree))
    ok(call(reg, ToolContext(environment=env), "search_files", pattern="run_app"))
    used_rg = any(c.startswith("rg ") for c in env.commands)
    assert used_rg is HAS_RG


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "c.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("**/test_*.py", "test_a.py", True),
        ("*.{js,ts}", "x/app.ts", True),
        ("[!a]*.md", "b.md", True),
        ("[!a]*.md", "a.md", False),
    ],
)
def test_glob_semantics(glob, path, matches):
    assert glob_matches(glob_regex(glob), path) is matches
