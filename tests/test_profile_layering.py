"""The profile package imports nothing above it (compile pushes into its registry), and
compile's profiler hookup and function maker do not import each other."""

from __future__ import annotations

import ast
import pathlib

import numpy as np

import graphc
import graphc.tensor as T
from graphc.profile import allocated
from graphc.profile.registry import REGISTRY

ROOT = pathlib.Path(__file__).resolve().parents[1] / "graphc"


def _imports(path: pathlib.Path) -> set[str]:
    """Every module imported anywhere in ``path`` (function-level imports included)."""
    out: set[str] = set()
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            out.add(n.module)
    return out


def test_profile_package_imports_only_itself_and_flags():
    bad = {
        f"{path.name}: {mod}"
        for path in (ROOT / "profile").glob("*.py")
        for mod in _imports(path)
        if (mod == "graphc" or mod.startswith("graphc."))
        and not (mod.startswith("graphc.profile") or mod == "graphc.flags")
    }
    assert bad == set()


def test_profiling_hookup_does_not_import_the_function_maker():
    assert "graphc.compile.function" not in _imports(ROOT / "compile" / "profiling.py")


def test_compiled_functions_push_into_the_registry(monkeypatch):
    monkeypatch.setattr(REGISTRY, "_at_exit", [])  # printed at exit: keep this one out
    x = T.dvector("x")
    with graphc.config.change_flags(profile=True, profiling__destination="stderr"):
        f = graphc.function([x], T.exp(x) + 1, name="pushed")
    assert any(s is f.profile for s in REGISTRY.registered())
    f(np.ones(5))
    current, peak = allocated()
    assert 0 <= current <= peak
    f.profile.refresh()
    assert f.profile.functions[0].calls == 1
