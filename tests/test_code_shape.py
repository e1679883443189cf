"""Sizes that keep graphc readable: no source file over 800 lines, no function over 80.

Lines are counted as the file has them; a function's lines run from its ``def`` (or first
decorator) to its last line, nested functions included, as ``ast`` reports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "graphc"
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80


def file_lengths(root: Path = PACKAGE) -> dict[str, int]:
    """Lines per ``.py`` file under ``root``, by path relative to it."""
    return {
        p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted(root.rglob("*.py"))
    }


def function_lengths(source: str) -> dict[str, int]:
    """Lines per function (methods as ``Class.method``; nested ones by their own name too)."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                name = prefix + child.name
                lengths[name] = max(lengths.get(name, 0), child.end_lineno - first + 1)
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return lengths


def long_functions(root: Path = PACKAGE) -> dict[str, int]:
    found = {}
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        for name, n in function_lengths(p.read_text(encoding="utf-8")).items():
            if n > MAX_FUNCTION_LINES:
                found[f"{rel}:{name}"] = n
    return found


def test_the_counts_are_right():
    src = (
        "@deco\ndef f():\n    def g():\n        return 1\n    return g\n\n\n"
        "class C:\n    def m(self):\n        pass\n"
    )
    assert function_lengths(src) == {"f": 5, "f.g": 2, "C.m": 2}
    assert sum(1 for _ in src.splitlines()) == 10


def test_no_file_over_800_lines():
    long = {f: n for f, n in file_lengths().items() if n > MAX_FILE_LINES}
    assert not long, f"files over {MAX_FILE_LINES} lines (split along a real seam): {long}"


def test_no_function_over_80_lines():
    long = long_functions()
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
