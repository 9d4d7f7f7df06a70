"""No import cycles in src/herald: not between modules, not between packages.

An ast walk of src/herald: every import counts (top level, inside functions and
under ``if TYPE_CHECKING:``), because each is a dependency someone must reason
about. ``from herald.pkg import name`` depends on ``herald.pkg`` (its
``__init__``) as well as on ``herald.pkg.name`` when that is a module. The graph
is checked module by module, and collapsed to top-level packages
(``herald.tools``, ``herald.memory``, …) for the layering check.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "herald"

HOW_TO_FIX = """\
Typical causes and fixes (moving the import into a function does not help: it still counts):
- a submodule imports a name through its own package's __init__ (`from herald.pkg import x`):
  import it from the module that defines it (`from herald.pkg.mod import x`, or
  `import herald.pkg.mod as mod`);
- two modules share a small type or helper: move it into a third, lower module both import;
- a lower module names the module that calls it (for a type or a back-call): name what it
  uses as a Protocol, or take it as a parameter or callback."""


def _modules(root: Path = ROOT) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_edges(root: Path = ROOT) -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first import of it}."""
    modules = _modules(root)
    edges: dict[str, dict[str, int]] = {m: {} for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for target in targets:
                resolved = _resolve(target, modules)
                if resolved is not None and resolved != module:
                    line = edges[module].get(resolved, node.lineno)
                    edges[module][resolved] = min(line, node.lineno)
    return edges


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    return {module: set(targets) for module, targets in import_edges(root).items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _report(found: list[list[str]], root: Path = ROOT, base: Path = SRC.parent) -> str:
    """Each cycle with the imports that close it (file:line), then how to fix one."""
    edges = import_edges(root)
    modules = _modules(root)
    lines = [f"{len(found)} import cycle(s):"]
    for component in found:
        members = set(component)
        lines.append("- " + ", ".join(component))
        for module in component:
            path = modules[module].relative_to(base)
            for target, line in sorted(edges[module].items()):
                if target in members:
                    lines.append(f"    {module} -> {target}  ({path}:{line})")
    return "\n".join([*lines, HOW_TO_FIX])


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_kind_of_import_counts(tmp_path: Path):
    """Function-level, TYPE_CHECKING, relative and through-the-package imports all close
    a cycle; an import of a sibling module by its full name does not touch the package."""
    pkg = tmp_path / "demo"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from demo.a import A\n",
        "a.py": "A = 1\ndef f():\n    from demo.b import B\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\nB = 2\n",
        "sub/__init__.py": "from demo.sub.x import X\n",
        "sub/x.py": "from demo.sub import y\nX = y.Y\n",
        "sub/y.py": "Y = 3\n",
        "c.py": "import demo.d as d\n",
        "d.py": "import demo.c\n",
        "e.py": "import demo.sub.y as y\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")
    found = cycles(module_graph(pkg))
    assert sorted(found) == [["demo.a", "demo.b"], ["demo.c", "demo.d"], ["demo.sub", "demo.sub.x"]]
    report = _report(found, pkg, tmp_path)
    assert f"demo.b -> demo.a  ({Path('demo', 'b.py')}:3)" in report
    assert "demo.e" not in report


def test_no_cycles_between_modules():
    found = cycles(module_graph())
    assert found == [], _report(found)


def test_no_cycles_between_packages():
    graph: dict[str, set[str]] = {}
    for module, targets in module_graph().items():
        here = _package(module)
        graph.setdefault(here, set()).update(_package(t) for t in targets if _package(t) != here)
    assert cycles(graph) == []


def test_no_cycles_inside_the_engine():
    engine = {
        m: {t for t in targets if t.startswith("herald.engine")}
        for m, targets in module_graph().items()
        if m.startswith("herald.engine")
    }
    assert cycles(engine) == [], _report(cycles(engine))


def test_the_walk_sees_the_whole_tree():
    """Guards the strict check against passing on an empty or mis-rooted graph."""
    graph = module_graph()
    assert len(graph) > 300
    assert "herald.tools.hooks" in graph["herald.tools.registry"]
    assert "herald.engine" in graph["herald.gateway.commands"]  # a function-level import


def test_only_agent_py_knows_the_agent():
    offenders = []
    for module, path in _modules().items():
        if not module.startswith("herald.engine.") or module == "herald.engine.agent":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "herald.engine.agent":
                offenders.append(module)
    assert offenders == []
