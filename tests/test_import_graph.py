"""The module import graph is one-way: no cycles, counting imports inside functions.

The graph is read from the source with ``ast`` (every ``import graphc...`` anywhere in a
module, including inside functions and ``if TYPE_CHECKING`` blocks, and every module named
by a string to ``importlib.import_module`` or ``__import__``), so a cycle hidden by a
deferred import still fails here. The root package's lazy table (``graphc/__init__.py``:
``name -> ("graphc.module", attr)``) counts as the root importing those modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "graphc"

# Modules below ``compile`` that still import the root package (none left).
KNOWN_ROOT_IMPORTERS: set[str] = set()

# Modules allowed to import the root package ``graphc``: the layers above compile.
ABOVE_COMPILE = ("graphc.gradient", "graphc.ifelse", "graphc.printing", "graphc.scan_module")


def module_names() -> dict[str, Path]:
    """Dotted name -> source file, for every module of the package."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(node: ast.AST, package: str, modules: dict[str, Path]) -> set[str]:
    """The graphc modules one import statement loads (``from p import m`` -> ``p.m``)."""
    if isinstance(node, ast.Import):
        targets = {_resolve(a.name, modules) for a in node.names if a.name.startswith("graphc")}
        return {t for t in targets if t}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    if not source.startswith("graphc"):
        return set()
    found = set()
    for alias in node.names:
        full = f"{source}.{alias.name}"
        target = full if full in modules else _resolve(source, modules)
        if target:
            found.add(target)
    return found


def _imported_by_name(node: ast.AST, modules: dict[str, Path]) -> set[str]:
    """The graphc module a call ``importlib.import_module("graphc...")`` or
    ``__import__("graphc...")`` loads by a string literal."""
    if not isinstance(node, ast.Call) or not node.args:
        return set()
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    arg = node.args[0]
    if called not in ("import_module", "__import__") or not isinstance(arg, ast.Constant):
        return set()
    if not isinstance(arg.value, str) or not arg.value.startswith("graphc"):
        return set()
    target = _resolve(arg.value, modules)
    return {target} if target else set()


def _lazy_table(tree: ast.AST, modules: dict[str, Path]) -> set[str]:
    """The modules of the root package's lazy table: ``("graphc.x", attr)`` tuples."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and len(node.elts) == 2:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if first.value.startswith("graphc.") and first.value in modules:
                    found.add(first.value)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the graphc modules it imports anywhere in its source."""
    modules = module_names()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            edges |= _imported(node, package, modules) | _imported_by_name(node, modules)
        if name == "graphc":
            edges |= _lazy_table(tree, modules)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycle_edges(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Edges whose two ends import each other, directly or through other modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    component: dict[str, int] = {}

    def visit(v: str) -> None:  # Tarjan's strongly connected components, iterative
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component[w] = index[node]
                    if w == node:
                        break

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return {(a, b) for a, bs in graph.items() for b in bs if component[a] == component[b]}


def _is_parent_package(a: str, b: str) -> bool:
    """A package importing its own submodule (its ``__init__`` re-exporting) is no cycle."""
    return b.startswith(a + ".")


def test_the_scan_sees_imports_inside_functions():
    graph = {"a": {"b"}, "b": set()}
    assert cycle_edges(graph) == set()
    graph["b"].add("a")
    assert cycle_edges(graph) == {("a", "b"), ("b", "a")}
    modules = {"graphc": Path(), "graphc.x": Path(), "graphc.x.y": Path()}
    deferred = ast.parse("def f():\n    from graphc.x import y\n    import graphc\n")
    found = set().union(*(_imported(n, "graphc.x", modules) for n in ast.walk(deferred)))
    assert found == {"graphc.x.y", "graphc"}
    by_name = ast.parse(
        "import importlib\n"
        "def f():\n"
        "    importlib.import_module('graphc.x.y.z')\n"
        "    __import__('graphc.x')\n"
        "    importlib.import_module(name)\n"
    )
    found = set().union(*(_imported_by_name(n, modules) for n in ast.walk(by_name)))
    assert found == {"graphc.x.y", "graphc.x"}
    table = ast.parse("def __getattr__(n):\n    lazy = {'y': ('graphc.x.y', None)}\n")
    assert _lazy_table(table, modules) == {"graphc.x.y"}


def test_the_root_package_lazy_table_is_read():
    assert {"graphc.scan_module", "graphc.gradient", "graphc.profile"} <= import_graph()["graphc"]


def test_no_import_cycle():
    graph = import_graph()
    cycles = {(a, b) for a, b in cycle_edges(graph) if not _is_parent_package(a, b)}
    assert not cycles, "modules that import each other (directly or in a loop):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in sorted(cycles)
    )


@pytest.mark.parametrize("layer", ["graph", "scalar", "tensor", "opt", "linker", "vm", "profile"])
def test_layers_below_compile_do_not_import_the_root_package(layer):
    graph = import_graph()
    offenders = {
        m
        for m, edges in graph.items()
        if (m == f"graphc.{layer}" or m.startswith(f"graphc.{layer}."))
        and "graphc" in edges
        and not m.startswith(ABOVE_COMPILE)
    } - KNOWN_ROOT_IMPORTERS
    assert not offenders, f"these modules import the root package graphc: {sorted(offenders)}"


def test_every_c_generator_module_is_declared_and_loaded_by_a_lookup():
    import pkgutil
    import subprocess
    import sys

    import graphc.linker.c as pkg
    from graphc.linker.c.generators import GENERATOR_MODULES

    gens = [m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.startswith("gen_")]
    declared = [m.__name__.rpartition(".")[2] for m in GENERATOR_MODULES]
    assert gens and sorted(gens) == sorted(declared)
    # in a fresh interpreter: the C linker alone, then one lookup, loads every one of them
    code = (
        "import sys, graphc.linker.clinker as cl, graphc.tensor as T\n"
        "cl.has_c_code(T.exp(T.dvector()).owner)\n"
        f"print([g for g in {gens!r} if 'graphc.linker.c.' + g not in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
