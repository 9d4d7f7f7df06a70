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
import functools
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


IMPORTERS = frozenset({"import_module", "__import__", "lazy_exports"})


def _module_constants(tree: ast.Module) -> list[ast.Constant]:
    """The string constants in the module-level assignments (tables of module names)."""
    out: list[ast.Constant] = []
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            out += [
                n
                for n in ast.walk(statement.value)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
    return out


def _string_imports(node: ast.Call, tree: ast.Module, modules: dict[str, Path]) -> list[str]:
    """What an `import_module(...)`/`__import__(...)` call may import: a literal names its
    module; an f-string every module under its literal prefix; anything else (a variable,
    an attribute, a lookup) every module named by a string in the module-level constants."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in IMPORTERS or not node.args:
        return []
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.JoinedStr):
        head = arg.values[0] if arg.values else None
        prefix = (
            head.value if isinstance(head, ast.Constant) and isinstance(head.value, str) else ""
        )
        return [m for m in modules if prefix and m.startswith(prefix)]
    return [c.value for c in _module_constants(tree) if c.value in modules]


def import_edges(root: Path = ROOT) -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first import of it}."""
    modules = _modules(root)
    edges: dict[str, dict[str, int]] = {m: {} for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Call):
                targets = _string_imports(node, tree, modules)
            elif isinstance(node, ast.Import):
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


@functools.cache
def _tree_edges() -> dict[str, dict[str, int]]:
    """`import_edges` of herald's own tree, walked once per test process (the walk
    parses every module: ~5 s, and six tests read it)."""
    return import_edges(ROOT)


def tree_edges() -> dict[str, dict[str, int]]:
    return {module: dict(targets) for module, targets in _tree_edges().items()}


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    edges = tree_edges() if root == ROOT else import_edges(root)
    return {module: set(targets) for module, targets in edges.items()}


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


# DESIGN.md's layer table, unit by unit (a module belongs to the longest unit naming it);
# each unit imports only from its own layer and the layers below. Mirrors DESIGN.md, plus
# what it does not list yet: herald.checkpoints (L0: workdir snapshots the tools' write
# step takes, on config alone), herald.testing (fakes and homes for tests and benches,
# above every layer, imported by nothing in src), herald.__main__ (the entry point) and
# herald.homes / herald.importers (L6).
LAYERS: dict[str, int] = {
    "herald": 0,  # the package's own __init__: the version, nothing else
    "herald.safety": 0,
    "herald.environments": 0,
    "herald.config": 0,
    "herald.checkpoints": 0,
    "herald.providers": 1,
    "herald.tools": 2,
    "herald.skills": 2,
    "herald.memory": 2,
    "herald.kanban": 2,
    "herald.plugins": 2,
    "herald.mcp": 2,
    "herald.context": 3,
    "herald.engine": 4,
    "herald.cron": 5,
    "herald.kanban.dispatch": 5,
    "herald.delegation": 5,
    "herald.state": 5,
    "herald.cli": 6,
    "herald.gateway": 6,
    "herald.mcp.server": 6,
    "herald.acp": 6,
    "herald.toolbox": 6,
    "herald.__main__": 6,
    # Moving homes: backups, upgrade checks and imports from other agents read and write
    # every store, so they sit with the surfaces that run them (the CLI, cron's child
    # process).
    "herald.homes": 6,
    "herald.importers": 6,
    "herald.testing": 7,
}


def _unit(module: str) -> str:
    """The layer-table unit `module` belongs to (the longest that names it)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in LAYERS:
            return candidate
    raise KeyError(module)


def _package(module: str) -> str:
    """The unit of the package-level checks: a layer-table unit (herald.mcp.server apart
    from herald.mcp, herald.kanban.dispatch apart from herald.kanban: different layers)."""
    return _unit(module)


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
        # named by string: a literal, a module-level table, an f-string's literal prefix
        "f.py": "import importlib\ndef f():\n    importlib.import_module('demo.g')\n",
        "g.py": "import demo.f\n",
        "h.py": "import importlib\nMODS = ('demo.i',)\ndef f(i):\n    importlib.import_module(MODS[i])\n",
        "i.py": "def f():\n    import demo.h\n",
        "j.py": "def f(n):\n    __import__(f'demo.sub.{n}')\n",
        "sub/z.py": "import demo.j\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")
    found = cycles(module_graph(pkg))
    assert sorted(found) == [
        ["demo.a", "demo.b"],
        ["demo.c", "demo.d"],
        ["demo.f", "demo.g"],
        ["demo.h", "demo.i"],
        ["demo.j", "demo.sub.z"],
        ["demo.sub", "demo.sub.x"],
    ]
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


def test_every_import_respects_the_layer_table():
    """A module imports only from its own layer and the layers below (DESIGN.md's table,
    mirrored in LAYERS), counting every kind of import the cycle checks count."""
    upward = []
    for module, targets in sorted(tree_edges().items()):
        here = LAYERS[_unit(module)]
        for target, line in sorted(targets.items()):
            there = LAYERS[_unit(target)]
            if there > here:
                upward.append(f"{module} (L{here}) -> {target} (L{there}), line {line}")
    assert upward == [], "imports that reach up a layer:\n" + "\n".join(upward)


def test_every_module_has_a_layer():
    missing = []
    for module in _modules():
        try:
            _unit(module)
        except KeyError:
            missing.append(module)
    assert missing == [], f"not in the layer table (LAYERS): {missing}"


def test_the_engine_never_names_the_composition_root():
    """The engine gets its tools from the surface: no import of herald.toolbox or of a
    capability's tool module, by any mechanism (the walk counts string imports)."""
    engine = {m: t for m, t in tree_edges().items() if _unit(m) == "herald.engine"}
    capability_modules = {
        "herald.toolbox",
        "herald.cron.tool",
        "herald.delegation.tool",
        "herald.kanban.tools",
        "herald.skills.tools",
        "herald.memory.tool",
    }
    reached = {(m, t) for m, targets in engine.items() for t in targets if t in capability_modules}
    assert reached == set()


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
