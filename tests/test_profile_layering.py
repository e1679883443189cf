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


def _imports_in(source: str) -> set[str]:
    """Every module imported anywhere in ``source`` (function-level imports included)."""
    out: set[str] = set()
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            out.update(f"{n.module}.{a.name}" for a in n.names)
        elif isinstance(n, ast.ImportFrom):  # relative: the checks below want absolute names
            out.add("." * n.level + (n.module or ""))
    return out


def _imports(path: pathlib.Path) -> set[str]:
    return _imports_in(path.read_text(encoding="utf-8"))


def _graphc(mods: set[str]) -> set[str]:
    return {m for m in mods if m == "graphc" or m.startswith(("graphc.", "."))}


def _outside(layer: str, allowed: tuple[str, ...]) -> set[str]:
    """``module: import`` for each graphc import of ``graphc/profile/<layer>`` that is not
    ``graphc.flags`` or under one of the ``allowed`` packages."""
    return {
        f"{layer}/{path.name}: {mod}"
        for path in sorted((ROOT / "profile" / layer).glob("*.py"))
        for mod in _graphc(_imports(path))
        if not mod.startswith(("graphc.flags.", *(a + "." for a in allowed)))
    }


def test_the_import_scan_sees_every_form():
    src = (
        "import graphc.profile.render.text\n"
        "from graphc.profile import render\n"
        "def f():\n    from graphc.profile.render.fmt import nbytes\n"
        "from . import text\n"
    )
    assert _imports_in(src) == {
        "graphc.profile.render.text",
        "graphc.profile.render",
        "graphc.profile.render.fmt.nbytes",
        ".",
    }
    assert _graphc(_imports_in(src)) == _imports_in(src)


def test_profile_package_imports_only_itself_and_flags():
    bad = {
        f"{path.relative_to(ROOT)}: {mod}"
        for path in (ROOT / "profile").rglob("*.py")
        for mod in _graphc(_imports(path))
        if not mod.startswith(("graphc.profile.", "graphc.flags."))
    }
    assert bad == set()


def test_the_data_layer_imports_no_summary_or_renderer():
    """``graphc.profile.data`` reads only itself (and the flags): never a summary, a
    renderer, the package root (which loads the renderers) or the modules on top."""
    assert _outside("data", ("graphc.profile.data",)) == set()


def test_summaries_import_only_the_data_layer():
    assert _outside("summaries", ("graphc.profile.data", "graphc.profile.summaries")) == set()


def test_renderers_import_no_module_above_them():
    below = ("graphc.profile.data", "graphc.profile.summaries", "graphc.profile.render")
    assert _outside("render", below) == set()


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
