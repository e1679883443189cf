"""Modes and the VMs behind graphc.function: both VMs agree, gc frees intermediates, lazy
evaluation skips untaken branches, profiling counts one call per node per call."""

from __future__ import annotations

import warnings
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphc
import graphc.tensor as gt
from graphc import function, shared
from graphc.compile.mode import FAST_COMPILE, FAST_RUN, PROFILE_MODE, Mode, get_mode, resolve
from graphc.graph.basic import Apply, Op

VMS = ["cvm", "py"]


def mode_for(vm: str) -> Mode:
    return graphc.Mode(linker="py", optimizer=None, vm=vm)


def vec(name):
    return gt.tensor("float64", shape=(None,), name=name)


# ------------------------------------------------------------------ test Ops


class Tracked(np.ndarray):
    """An ndarray subclass that can be weak-referenced by tests (ndarrays can't be)."""


class Track(Op):
    """Identity-valued copy of its input whose result is a ``Tracked`` array; every result
    is recorded in ``self.refs`` as a weakref."""

    __props__ = ("tag",)

    def __init__(self, tag: str):
        self.tag = tag
        self.refs: list[weakref.ref] = []

    def make_node(self, x):
        x = gt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        r = np.array(inputs[0], copy=True).view(Tracked)
        self.refs.append(weakref.ref(r))
        out[0][0] = r


class Probe(Op):
    """Copies its input; calls ``check()`` while it runs (to look at the VM mid-call)."""

    __props__ = ("tag",)

    def __init__(self, tag: str, check):
        self.tag = tag
        self.check = check

    def make_node(self, x):
        x = gt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        self.check()
        out[0][0] = np.array(inputs[0], copy=True)


class Count(Op):
    """``x * factor``; counts its perform calls."""

    __props__ = ("tag",)

    def __init__(self, tag: str, factor: float = 1.0):
        self.tag = tag
        self.factor = factor
        self.calls = 0

    def make_node(self, x):
        x = gt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        self.calls += 1
        out[0][0] = np.asarray(inputs[0] * self.factor)


class LazySwitch(Op):
    """``a if cond else b`` with the lazy protocol: asks only for the branch it takes."""

    __props__ = ()
    lazy = True

    def make_node(self, cond, a, b):
        cond, a, b = (gt.as_tensor_variable(v) for v in (cond, a, b))
        return Apply(self, [cond, a, b], [a.type()])

    def lazy_perform(self, node, computed, inputs, out):
        if not computed[0]:
            return (0,)
        k = 1 if inputs[0] else 2
        if not computed[k]:
            return (k,)
        out[0][0] = np.array(inputs[k], copy=True)
        return ()


# ------------------------------------------------------------------ both VMs agree


def _graphs():
    x, y = vec("x"), vec("y")
    s = gt.scalar("s")
    return {
        "arith": ([x, y], [x * y + x, (x - y) * s, gt.exp(x) / (1 + y * y)], [s]),
        "reduce": ([x, y], [gt.sum(x * y), gt.max(x - y), gt.mean(x)], []),
        "chain": ([x, y], [((x + y) * 2 - x) * y + 1], []),
    }


_FNS: dict = {}


def _compiled(name: str, vm: str):
    key = (name, vm)
    if key not in _FNS:
        ins, outs, extra = _graphs()[name]
        _FNS[key] = function(ins + extra, outs, mode=mode_for(vm))
    return _FNS[key]


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(["arith", "reduce", "chain"]),
    data=st.data(),
)
def test_both_vms_give_identical_results(name, data):
    n = data.draw(st.integers(1, 5))
    elems = st.floats(-20, 20, allow_nan=False)
    x = data.draw(hnp.arrays(np.float64, n, elements=elems))
    y = data.draw(hnp.arrays(np.float64, n, elements=elems))
    args = [x, y] + ([data.draw(elems)] if name == "arith" else [])
    rc = _compiled(name, "cvm")(*args)
    rp = _compiled(name, "py")(*args)
    assert len(rc) == len(rp)
    for a, b in zip(rc, rp):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("vm", VMS)
def test_vm_kind_is_the_one_asked_for(vm):
    x = vec("x")
    f = function([x], x + 1, mode=mode_for(vm))
    assert f.vm.kind == vm or (vm == "cvm" and f.vm.kind == "py")  # py when not built


@pytest.mark.parametrize("vm", VMS)
def test_updates_agree_between_vms(vm):
    x = vec("x")
    a, b = shared(np.arange(3.0), "a"), shared(np.ones(3), "b")
    f = function([x], a + b, updates=[(a, b * x), (b, a + 1)], mode=mode_for(vm))
    r1 = f(np.full(3, 2.0))
    np.testing.assert_array_equal(r1, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(a.get_value(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(b.get_value(), [1.0, 2.0, 3.0])


# ------------------------------------------------------------------ garbage collection


@pytest.mark.parametrize("vm", VMS)
def test_gc_frees_intermediates_during_and_after_the_call(vm):
    track = Track(f"gc-{vm}")
    seen_alive: list[bool] = []

    def check():  # runs after the tracked value's last reader (y * 2) has run
        seen_alive.append(track.refs[-1]() is not None)

    x = vec("x")
    out = Probe(f"gc-{vm}", check)(track(x) * 2) + 1
    f = function([x], out, mode=mode_for(vm))
    assert f.maker.allow_gc
    np.testing.assert_array_equal(f(np.arange(3.0)), [1.0, 3.0, 5.0])
    assert seen_alive == [False]  # freed as soon as its last reader ran
    assert track.refs[-1]() is None


@pytest.mark.parametrize("vm", VMS)
def test_without_gc_intermediates_persist_between_calls(vm):
    track = Track(f"nogc-{vm}")
    x = vec("x")
    with graphc.config.change_flags(allow_gc=False):
        f = function([x], track(x) * 2, mode=mode_for(vm))
    assert not f.maker.allow_gc
    r1 = f(np.arange(3.0))
    assert track.refs[-1]() is not None  # kept by the VM for the next call
    r2 = f(np.ones(3))
    assert track.refs[0]() is None and track.refs[1]() is not None
    # outputs are never reused: the first result is unchanged by the second call
    np.testing.assert_array_equal(r1, [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(r2, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("vm", VMS)
def test_nogc_linker_keeps_intermediates(vm):
    if not graphc.linker.c_available():
        pytest.skip("c|py_nogc needs the C linker")
    track = Track(f"nogc-linker-{vm}")
    x = vec("x")
    f = function([x], track(x) * 2, mode=Mode(linker="c|py_nogc", optimizer=None, vm=vm))
    f(np.arange(3.0))
    assert track.refs[-1]() is not None


# ------------------------------------------------------------------ lazy evaluation


@pytest.mark.parametrize("vm", VMS)
@pytest.mark.parametrize("cond", [0.0, 1.0])
def test_lazy_node_does_not_run_the_untaken_branch(vm, cond):
    left, right = Count("left", 2.0), Count("right", 3.0)
    c, x = gt.scalar("c"), vec("x")
    f = function([c, x], LazySwitch()(c, left(x), right(x)), mode=mode_for(vm))
    for _ in range(3):
        r = f(cond, np.ones(2))
    np.testing.assert_array_equal(r, [2.0, 2.0] if cond else [3.0, 3.0])
    assert (left.calls, right.calls) == ((3, 0) if cond else (0, 3))


@pytest.mark.parametrize("vm", VMS)
def test_ifelse_does_not_run_the_untaken_branch(vm):
    ifelse_mod = pytest.importorskip("graphc.ifelse")
    left, right = Count("if-left", 2.0), Count("if-right", 3.0)
    c, x = gt.scalar("c"), vec("x")
    f = function([c, x], ifelse_mod.ifelse(c, left(x), right(x)), mode=mode_for(vm))
    np.testing.assert_array_equal(f(1.0, np.ones(2)), [2.0, 2.0])
    assert (left.calls, right.calls) == (1, 0)
    np.testing.assert_array_equal(f(0.0, np.ones(2)), [3.0, 3.0])
    assert (left.calls, right.calls) == (1, 1)


# ------------------------------------------------------------------ profiling hooks


@pytest.mark.parametrize("vm", VMS)
@pytest.mark.parametrize("n_calls", [1, 7])
def test_profile_records_one_call_per_node_per_function_call(vm, n_calls):
    x, y = vec("x"), vec("y")
    out = gt.sum((x + y) * (x - y)) + gt.max(x)
    f = function([x, y], out, mode=mode_for(vm), profile=True)
    for _ in range(n_calls):
        f(np.ones(4), np.arange(4.0))
    f.profile.refresh()
    rec = f.profile.functions[0]
    assert len(rec.nodes) == len(f.linked.schedule) >= 5
    assert [n.calls for n in rec.nodes] == [n_calls] * len(rec.nodes)
    assert rec.calls == n_calls


def test_profile_counts_a_lazy_node_once_and_skipped_nodes_zero():
    left, right = Count("prof-left"), Count("prof-right")
    c, x = gt.scalar("c"), vec("x")
    f = function([c, x], LazySwitch()(c, left(x), right(x)), mode=mode_for("cvm"), profile=True)
    for _ in range(4):
        f(1.0, np.ones(2))
    f.profile.refresh()
    rec = f.profile.functions[0]
    calls = {n.op_name: n.calls for n in rec.nodes}
    assert calls["LazySwitch"] == 4
    assert calls["Count{prof-left}"] == 4 and calls["Count{prof-right}"] == 0


def test_profile_mode_profiles_every_function(monkeypatch):
    import graphc.compile.profiling as profiling

    registered = []
    monkeypatch.setattr(profiling, "_register_at_exit", registered.append)
    x = vec("x")
    f = function([x], x * 2, mode=Mode(linker="py", optimizer=None, profile=True))
    assert f.profile is not None and registered == [f.profile]
    assert PROFILE_MODE.profile and get_mode("PROFILE_MODE") is PROFILE_MODE
    g = function([x], x * 2, mode=Mode(linker="py", optimizer=None))
    assert g.profile is None


# ------------------------------------------------------------------ modes


def test_named_modes_resolve():
    assert get_mode("FAST_COMPILE") is FAST_COMPILE
    assert get_mode("FAST_RUN") is FAST_RUN
    assert get_mode("PROFILE_MODE") is PROFILE_MODE
    assert get_mode(FAST_RUN) is FAST_RUN
    assert FAST_COMPILE.linker == "py" and FAST_COMPILE.optimizer == "fast_compile"
    assert FAST_RUN.optimizer == "fast_run"
    assert str(FAST_RUN) == "FAST_RUN"


def test_config_mode_chooses_the_default():
    with graphc.config.change_flags(mode="FAST_COMPILE"):
        assert get_mode(None) is FAST_COMPILE
        x = vec("x")
        f = function([x], x + 1)
        assert f.maker.mode is FAST_COMPILE
        assert f.maker.linker.name == "py"
    assert get_mode(None) is get_mode(graphc.config.mode)


@settings(max_examples=25, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["including", "excluding", "requiring"]),
            st.lists(st.sampled_from(["fusion", "inplace", "blas", "a_b"]), max_size=3),
        ),
        max_size=5,
    )  # fmt: skip
)
def test_including_excluding_requiring_return_new_modes(ops):
    base = Mode(linker="py", optimizer="fast_run")
    mode = base
    want = {"including": [], "excluding": [], "requiring": []}
    for meth, tags in ops:
        new = getattr(mode, meth)(*tags)
        assert isinstance(new, Mode)
        assert new.linker == "py" and new.optimizer == "fast_run"
        want[meth] += tags
        mode = new
    assert base.included == base.excluded == base.required == ()
    assert list(mode.included) == want["including"]
    assert list(mode.excluded) == want["excluding"]
    assert list(mode.required) == want["requiring"]
    with graphc.config.change_flags(optimizer_including="x1:x2", optimizer_excluding="y"):
        plan = resolve(mode)
        inc, exc, req = plan.including, plan.excluding, plan.requiring
    assert inc == tuple(want["including"]) + ("x1", "x2")
    assert exc == tuple(want["excluding"]) + ("y",)
    assert req == tuple(want["requiring"])


def test_including_a_named_mode_keeps_it_unchanged():
    m = FAST_RUN.including("fusion")
    assert m is not FAST_RUN and m.included == ("fusion",) and FAST_RUN.included == ()
    assert m.optimizer == FAST_RUN.optimizer and m.linker == FAST_RUN.linker


def test_unknown_names_raise_value_error():
    with pytest.raises(ValueError, match="unknown linker 'nope'"):
        Mode(linker="nope")
    with pytest.raises(ValueError, match="unknown optimizer 'nope'"):
        Mode(optimizer="nope")
    with pytest.raises(ValueError, match="unknown mode 'NOPE'"):
        get_mode("NOPE")
    x = vec("x")
    with pytest.raises(ValueError, match="unknown mode"):
        function([x], x + 1, mode="NOPE")
    with graphc.config.change_flags(mode="NOPE"), pytest.raises(ValueError, match="NOPE"):
        function([x], x + 1)
    with pytest.raises(ValueError, match="VM kind"):
        function([x], x + 1, mode=Mode(linker="py", optimizer=None, vm="nope"))


def test_optimizer_none_is_accepted_as_none_or_string():
    assert resolve(Mode(optimizer=None)).optimizer == "None"
    assert resolve(Mode(optimizer="None")).optimizer == "None"


@pytest.mark.parametrize("linker", ["c|py", "c|py_nogc", "cvm", "vm"])
def test_c_linker_works_or_says_it_is_unavailable(linker):
    x, y = vec("x"), vec("y")
    mode = Mode(linker=linker, optimizer=None)
    if graphc.linker.c_available():
        f = function([x, y], x * y + 1, mode=mode)
        np.testing.assert_array_equal(f(np.arange(3.0), np.full(3, 2.0)), [1.0, 3.0, 5.0])
        assert f.maker.linker.name == linker
    else:
        with pytest.warns(RuntimeWarning, match="runs every node in Python"):
            f = function([x, y], x * y + 1, mode=mode)
        np.testing.assert_array_equal(f(np.arange(3.0), np.full(3, 2.0)), [1.0, 3.0, 5.0])


def test_c_linker_without_a_compiler_falls_back_with_one_warning(monkeypatch, tmp_path):
    from graphc.linker import clinker

    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setenv("GRAPHC_COMPILEDIR", str(tmp_path))
    clinker.reset_available()
    try:
        x, y = vec("x"), vec("y")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f = function([x, y], x * y + 1, mode=Mode(linker="c|py", optimizer=None))
        relevant = [w for w in caught if "runs every node in Python" in str(w.message)]
        assert len(relevant) == 1 and "/nonexistent/cc" in str(relevant[0].message)
        assert not any(impl.is_c for impl in f.linked.impls)
        np.testing.assert_array_equal(f(np.arange(3.0), np.full(3, 2.0)), [1.0, 3.0, 5.0])
    finally:
        monkeypatch.undo()
        clinker.reset_available()


def test_auto_linker_always_compiles():
    x = vec("x")
    f = function([x], x * 2, mode=Mode(linker="auto", optimizer=None))
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    assert f.maker.linker.name == ("c|py" if graphc.linker.c_available() else "py")


def test_config_linker_is_what_auto_resolves_to():
    x = vec("x")
    with graphc.config.change_flags(linker="py"):
        f = function([x], x * 2, mode=Mode(optimizer=None))
        assert f.maker.linker.name == "py"
        assert function([x], x * 2, mode="FAST_RUN").maker.linker.name == "py"
        # an explicit linker wins over the flag
        assert function([x], x * 2, mode=FAST_COMPILE).maker.linker.name == "py"
    with (
        graphc.config.change_flags(linker="no_such_linker"),
        pytest.raises(ValueError, match=r"no_such_linker' \(graphc.config.linker\)"),
    ):
        function([x], x * 2, mode=Mode(optimizer=None))
    with graphc.config.change_flags(linker="auto"):
        want = "c|py" if graphc.linker.c_available() else "py"
        assert function([x], x * 2, mode=Mode(optimizer=None)).maker.linker.name == want


def test_mode_named_mode_uses_the_linker_and_optimizer_flags():
    x = vec("x")
    with graphc.config.change_flags(mode="Mode", linker="py", optimizer="None"):
        f = function([x], x * 2 + 1)
        assert f.maker.mode.optimizer == "None" and f.maker.linker.name == "py"
        assert str(f.maker.mode) == "Mode"
    with graphc.config.change_flags(optimizer="fast_compile"):
        assert get_mode("Mode").optimizer == "fast_compile"
        assert get_mode("FAST_RUN").optimizer == "fast_run"  # named modes are fixed
    with graphc.config.change_flags(optimizer="nope"), pytest.raises(ValueError, match="nope"):
        get_mode("Mode")
