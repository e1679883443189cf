"""The ``mode`` argument resolved once: every spelling of it gives the plan the README's
"Modes" table and flag descriptions say, the compiled function follows that plan, and
nothing in ``graphc/compile`` probes a mode or a maker with ``getattr``."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest

import graphc
import graphc.tensor as gt
from graphc.compile.debugmode import DebugMode
from graphc.compile.maker import CompileOptions
from graphc.compile.mode import FAST_RUN, CompilePlan, Mode, resolve
from graphc.compile.monitormode import MonitorMode
from graphc.compile.profilemode import ProfileMode
from graphc.linker import c_available
from graphc.profile.stats import ProfileStats
from graphc.vm import VM

COMPILE = Path(graphc.__file__).parent / "compile"
AUTO = "c|py" if c_available() else "py"  # README: auto is c|py when a C compiler works


def _profile_mode(**kw) -> ProfileMode:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ProfileMode(**kw)


def _expect(plan: CompilePlan, optimizer, linker, profile=False, at_exit=False) -> None:
    assert (plan.optimizer, plan.linker.name) == (optimizer, linker)
    assert (plan.profile, plan.print_at_exit) == (profile, at_exit)


# ------------------------------------------------------------------ each spelling


@pytest.mark.parametrize(
    "spelling, optimizer, linker, profiled",
    [
        (None, "fast_run", AUTO, False),  # config.mode's default is FAST_RUN
        ("FAST_RUN", "fast_run", AUTO, False),
        ("FAST_COMPILE", "fast_compile", "py", False),
        ("PROFILE_MODE", "fast_run", AUTO, True),  # "profiled, summary printed at exit"
        ("ProfileMode", "fast_run", AUTO, True),  # Theano's name for the same
        ("DEBUG_MODE", "fast_run", AUTO, False),
        ("Mode", "fast_run", AUTO, False),  # config.optimizer and config.linker: defaults
    ],
)
def test_mode_names_resolve_as_the_readme_table_says(spelling, optimizer, linker, profiled):
    _expect(resolve(spelling), optimizer, linker, profiled, profiled)


def test_debug_mode_runs_its_checking_vm_and_keeps_the_unoptimized_graph():
    for spelling in ("DEBUG_MODE", DebugMode(linker="py")):
        plan = resolve(spelling)
        assert plan.vm_factory is not None and plan.keep_unoptimized
        x = gt.dvector("x")
        f = graphc.function([x], x * 2 + 1, mode=spelling)
        assert f.vm.kind == "debug" and f.maker.unoptimized is not None
        np.testing.assert_allclose(f(np.arange(3.0)), np.arange(3.0) * 2 + 1)
    # check_optimizations=False: no rewrite to check, so no copy of the graph is kept
    assert not resolve(DebugMode(check_optimizations=False)).keep_unoptimized
    assert resolve("FAST_RUN").vm_factory is None and not resolve("FAST_RUN").keep_unoptimized


def test_mode_objects_resolve_to_their_fields():
    plan = resolve(Mode(linker="vm_nogc", optimizer=None))
    _expect(plan, "None", "vm_nogc")
    # README: vm runs C thunks on the pure-Python VM; _nogc keeps intermediates
    assert plan.vm_kind == "py" and plan.allow_gc is False and plan.linker.use_c
    plan = resolve(Mode(linker="py", optimizer="merge").including("fusion").excluding("inplace"))
    _expect(plan, "merge", "py")
    assert plan.including == ("fusion",) and plan.excluding == ("inplace",)
    assert resolve(Mode(linker="py", vm="py")).vm_kind == "py"
    assert resolve(FAST_RUN).mode is FAST_RUN


def test_monitor_mode_runs_its_own_vm():
    seen = []
    mode = MonitorMode(pre_func=lambda i, node, fn: seen.append(i))
    assert resolve(mode).vm_factory is not None and resolve(mode).linker.name == "py"
    x = gt.dvector("x")
    f = graphc.function([x], gt.exp(x) + 1, mode=mode)
    assert f.vm.kind == "monitor"
    np.testing.assert_allclose(f(np.zeros(2)), np.exp(np.zeros(2)) + 1)
    assert seen  # the hook saw the nodes run


def test_profile_mode_objects_profile_into_their_own_stats():
    pm = _profile_mode(optimizer="fast_compile", linker="py")
    plan = resolve(pm)
    _expect(plan, "fast_compile", "py", profile=True)
    assert plan.profile_target is pm.stats and str(plan.mode) == "ProfileMode"
    x = gt.dvector("x")
    f = graphc.function([x], x * 2, mode=pm)
    f(np.ones(3))
    assert f.profile is pm.stats and len(pm.stats.functions) == 1
    # a Theano linker object maps to graphc's linker by its class name

    class PerformLinker:
        pass

    assert resolve(_profile_mode(linker=PerformLinker())).linker.name == "py"


def test_the_profile_argument():
    _expect(resolve("FAST_RUN", profile=True), "fast_run", AUTO, profile=True)
    assert resolve("FAST_RUN", profile=True).profile_target is None  # a new ProfileStats
    stats = ProfileStats()
    plan = resolve("FAST_COMPILE", profile=stats)
    assert plan.profile and plan.profile_target is stats and not plan.print_at_exit
    assert not resolve("PROFILE_MODE", profile=False).profile  # the argument wins
    with graphc.config.change_flags(profile=True):
        assert not resolve(None, profile=False).profile
    x = gt.dvector("x")
    f = graphc.function([x], x + 1, profile=stats)
    assert f.profile is stats


# ------------------------------------------------------------------ the flags


def test_flags_are_read_by_resolve():
    cfg = graphc.config
    with cfg.change_flags(mode="FAST_COMPILE"):
        _expect(resolve(None), "fast_compile", "py")
    with cfg.change_flags(mode="Mode", linker="py", optimizer="merge"):
        _expect(resolve(None), "merge", "py")
    with cfg.change_flags(linker="vm"):  # a Mode's linker "auto" defers to the flag
        plan = resolve(Mode(optimizer=None))
        assert plan.linker.name == "vm" and plan.vm_kind == "py"
    with cfg.change_flags(allow_gc=False):
        assert resolve("FAST_COMPILE").allow_gc is False
    assert resolve("FAST_COMPILE").allow_gc is True  # the flag's default
    with cfg.change_flags(allow_gc=True):  # a _nogc linker never collects
        assert resolve(Mode(linker="c|py_nogc")).allow_gc is False
    with cfg.change_flags(vm="py"):
        assert resolve(Mode(linker="cvm")).vm_kind == "py"
    assert resolve(Mode(linker="cvm")).vm_kind == "cvm"
    with cfg.change_flags(profile=True):
        _expect(resolve("FAST_COMPILE"), "fast_compile", "py", profile=True, at_exit=True)
    with cfg.change_flags(optimizer_including="fusion", optimizer_requiring="inplace"):
        plan = resolve(Mode(optimizer="fast_run").including("blas"))
        assert plan.including == ("blas", "fusion") and plan.requiring == ("inplace",)


def test_the_plan_is_frozen_and_read_once():
    plan = resolve("FAST_COMPILE")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.optimizer = "fast_run"  # type: ignore[misc]
    x = gt.dvector("x")
    f = graphc.function([x], x + 1, mode="FAST_COMPILE")
    with graphc.config.change_flags(allow_gc=False, vm="py"):  # later flags change nothing
        g = f.copy()
    assert g.maker.plan.allow_gc is True and g.vm.kind == f.vm.kind
    assert g.maker.plan.linker == f.maker.plan.linker


def test_the_function_follows_its_plan(monkeypatch):
    import graphc.compile.profiling as profiling

    at_exit: list = []
    monkeypatch.setattr(profiling, "_register_at_exit", at_exit.append)
    x = gt.dvector("x")
    for mode in ("FAST_COMPILE", Mode(linker="vm_nogc", optimizer=None), "PROFILE_MODE"):
        f = graphc.function([x], x * 3, mode=mode)
        plan = f.maker.plan
        assert f.vm.kind == plan.vm_kind and f.maker.linker is plan.linker
        assert (f.profile is not None) == plan.profile
        assert (f.profile in at_exit) == plan.print_at_exit
        np.testing.assert_allclose(f(np.arange(3.0)), np.arange(3.0) * 3)


def test_unknown_names_raise_naming_the_source():
    with pytest.raises(ValueError, match="unknown mode 'NOPE'"):
        resolve("NOPE")
    with pytest.raises(ValueError, match="unknown mode"):
        resolve(42)  # type: ignore[arg-type]
    with graphc.config.change_flags(mode="Mode", optimizer="nope"):
        with pytest.raises(ValueError, match=r"'nope' \(graphc.config.optimizer\)"):
            resolve(None)
    from graphc.opt import rewrite_graph

    x = gt.dvector("x")
    fg = graphc.function([x], x + 1).maker.fgraph
    # the same check (one place) for a Mode and for the rewrite entry point
    with pytest.raises(ValueError) as by_mode:
        Mode(optimizer="nope")
    with pytest.raises(ValueError) as by_rewrite:
        rewrite_graph(fg, "nope")
    assert str(by_mode.value) == str(by_rewrite.value)


# ------------------------------------------------------------------ structure


def test_the_function_arguments_are_one_record():
    params = list(inspect.signature(graphc.function).parameters)
    passed = [p for p in params if p not in ("inputs", "outputs", "mode", "trust_input")]
    assert passed == [f.name for f in dataclasses.fields(CompileOptions)]


def test_every_vm_has_what_the_compile_layer_calls():
    members = {"kind", "failed_node", "stats", "__call__"}
    declared = set(VM.__annotations__) | {
        n for n in vars(VM) if not n.startswith("_") or n == "__call__"
    }
    assert members <= declared
    x = gt.dvector("x")
    modes = [Mode(linker="py", vm="py"), Mode(linker="py", vm="cvm"), DebugMode(linker="py"),
             MonitorMode()]  # fmt: skip
    for mode in modes:
        vm = graphc.function([x], x + 1, mode=mode).vm
        for name in members:
            assert hasattr(vm, name), (type(vm).__name__, name)
        assert isinstance(vm.stats(), dict) and vm.failed_node is None


def _compile_sources():
    for path in sorted(COMPILE.glob("*.py")):
        yield path, ast.parse(path.read_text(), str(path))


def _names_mode_or_maker(node: ast.AST) -> bool:
    text = ast.unparse(node).lower()
    return "mode" in text or "maker" in text


def test_no_getattr_on_a_mode_or_maker_and_no_object_setattr():
    found = []
    for path, tree in _compile_sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fn = ast.unparse(node.func)
            if fn in ("getattr", "hasattr") and node.args and _names_mode_or_maker(node.args[0]):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
            if fn == "object.__setattr__":
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "\n".join(found)


def test_the_scan_finds_what_it_looks_for():
    tree = ast.parse("getattr(self.maker.mode, 'x')\nobject.__setattr__(m, 'a', 1)")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert _names_mode_or_maker(calls[0].args[0])
    assert ast.unparse(calls[1].func) == "object.__setattr__"
