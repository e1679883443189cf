"""DEBUG_MODE: each check fires on a deliberately broken Op, C thunk or rewrite, and stays
quiet on correct graphs."""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import subprocess
import sysconfig

import numpy as np
import pytest

import graphc
import graphc.opt
import graphc.tensor as T
from graphc.compile.debugmode import (
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadViewMap,
    DebugMode,
    DebugModeError,
    DebugVM,
    InvalidValueError,
    compare_values,
)
from graphc.compile.mode import Mode, get_mode
from graphc.graph.basic import Apply, Op
from graphc.linker import c_available
from graphc.linker.base import NodeImpl

PY_DEBUG = DebugMode(linker="py")


# ------------------------------------------------------------------ test Ops


class _Unary(Op):
    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])


class AddOne(_Unary):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + 1


class ModifiesInput(_Unary):
    def perform(self, node, inputs, out):
        inputs[0] += 1
        out[0][0] = inputs[0].copy()


class ReturnsView(_Unary):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0][...]


class DeclaredView(ReturnsView):
    view_map = {0: [0]}


class WrongDtype(_Unary):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0].astype("float32")


class ReusesBlindly(_Unary):
    """Reuses the previous output buffer without checking its shape."""

    def perform(self, node, inputs, out):
        if out[0][0] is not None:
            np.add(inputs[0], 1, out=out[0][0])
        else:
            out[0][0] = inputs[0] + 1


class IgnoresStrides(_Unary):
    """Reads the input's memory as if it were C-contiguous."""

    def perform(self, node, inputs, out):
        (x,) = inputs
        base = x if x.base is None else x.base
        flat = np.frombuffer(base, dtype=x.dtype, count=x.size) if x.size else x.ravel()
        out[0][0] = flat.reshape(x.shape) + 1


# ------------------------------------------------------------------ the mode itself


def test_debug_mode_by_name_is_a_mode():
    m = get_mode("DEBUG_MODE")
    assert isinstance(m, DebugMode) and isinstance(m, Mode)
    assert str(m) == "DEBUG_MODE" and m.optimizer == "fast_run"
    assert isinstance(m.including("fast_run"), DebugMode)


def test_function_uses_a_modes_vm_factory():
    class Recording(Mode):
        def make_vm(self, maker, linked):
            from graphc.vm import make_vm

            self.seen.append(linked)
            return make_vm(linked.program, kind="py")

        def vm_factory(self):
            return self.make_vm

    mode = Recording(linker="py")
    object.__setattr__(mode, "seen", [])
    x = T.vector("x")
    f = graphc.function([x], x * 2, mode=mode)
    assert mode.seen and f(np.arange(3.0)).tolist() == [0, 2, 4]


def test_correct_graph_passes_and_matches_fast_compile():
    x, y = T.matrix("x"), T.vector("y")
    outs = [T.exp(x) * y + x.sum(axis=0), x.T, T.max(x, axis=1), T.tanh(x)[::-1] ** 2]
    f = graphc.function([x, y], outs, mode="DEBUG_MODE")
    g = graphc.function([x, y], outs, mode="FAST_COMPILE")
    xv = np.random.default_rng(0).normal(size=(3, 4))
    yv = np.arange(4.0)
    xc, yc = xv.copy(), yv.copy()
    for a, b in zip(f(xv, yv), g(xv, yv)):
        np.testing.assert_allclose(a, b)
    np.testing.assert_array_equal(xv, xc)
    np.testing.assert_array_equal(yv, yc)
    assert not any(np.shares_memory(o, xv) for o in f(xv, yv))


def test_shared_updates_under_debug_mode():
    s = graphc.shared(np.zeros(3), name="s")
    x = T.vector("x")
    f = graphc.function([x], s + x, updates=[(s, s + x)], mode=PY_DEBUG)
    f(np.ones(3))
    f(np.ones(3))
    np.testing.assert_array_equal(s.get_value(), [2, 2, 2])


def test_declared_view_and_destroy_pass():
    x = T.vector("x")
    y = x * 2
    inplace = T.Elemwise(T.elemwise_op("exp").scalar_op, {0: 0})(y)
    f = graphc.function([x], [DeclaredView()(x) + 0, inplace], mode=PY_DEBUG)
    a, b = f(np.arange(3.0))
    np.testing.assert_allclose(b, np.exp(np.arange(3.0) * 2))


@pytest.mark.parametrize(
    "op, exc, words",
    [
        (ModifiesInput(), BadDestroyMap, "modified its input 0"),
        (ReturnsView(), BadViewMap, "shares memory with input 0"),
        (WrongDtype(), InvalidValueError, "not a valid"),
        (ReusesBlindly(), BadThunkOutput, "wrong-shape output buffers"),
        (IgnoresStrides(), BadThunkOutput, "strided inputs"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Op) else None,
)
def test_broken_perform_is_reported(op, exc, words):
    x = T.vector("x")
    f = graphc.function([x], op(x), mode=PY_DEBUG)
    with pytest.raises(exc) as info:
        f(np.arange(4.0))
    msg = str(info.value)
    assert words in msg and str(op) in msg
    assert isinstance(info.value, DebugModeError)


def test_check_nan():
    x = T.vector("x")
    f = graphc.function([x], T.log(x), mode=PY_DEBUG)
    assert np.isnan(f(np.array([-1.0, 1.0]))[0])  # off by default
    g = graphc.function([x], T.log(x), mode=DebugMode(linker="py", check_nan=True))
    with pytest.raises(InvalidValueError, match=r"NaN/Inf value\(s\), first at index \(0,\)"):
        g(np.array([-1.0, 1.0]))
    before = graphc.config.DebugMode__check_nan
    graphc.config.DebugMode__check_nan = True
    try:
        with pytest.raises(InvalidValueError, match="log"):
            f(np.array([1.0, 0.0]))
    finally:
        graphc.config.DebugMode__check_nan = before


# ------------------------------------------------------------------ rewrites


def _exp_rewriter(make_new):
    def rewrite_graph(fgraph, optimizer="fast_run", *tags):
        for node in fgraph.toposort():
            if str(node.op).startswith("Elemwise{exp"):
                fgraph.replace(node.outputs[0], make_new(node.inputs[0]), reason="exp_rewrite")
        return graphc.opt.RewriteReport()

    return rewrite_graph


def test_bad_rewrite_is_named(monkeypatch):
    monkeypatch.setattr(graphc.opt, "rewrite_graph", _exp_rewriter(lambda v: v + 1))
    x = T.vector("x")
    f = graphc.function([x], T.exp(x) * 2, mode=PY_DEBUG)
    with pytest.raises(BadOptimization) as info:
        f(np.array([0.0, 1.0, 2.0]))
    msg = str(info.value)
    assert "'exp_rewrite'" in msg and "first at index (1,)" in msg and "max abs diff" in msg


def test_good_rewrite_passes(monkeypatch):
    monkeypatch.setattr(graphc.opt, "rewrite_graph", _exp_rewriter(lambda v: T.exp(v * 1.0)))
    x = T.vector("x")
    f = graphc.function([x], T.exp(x) * 2, mode=PY_DEBUG)
    np.testing.assert_allclose(f(np.array([0.0, 1.0])), 2 * np.exp([0.0, 1.0]))
    assert [r[2] for r in f.vm.records] == ["exp_rewrite"]


# ------------------------------------------------------------------ values


def test_compare_values_messages():
    assert compare_values(np.ones(3), np.ones(3) + 1e-12) is None
    assert "dtype float32" in compare_values(np.ones(3, "float32"), np.ones(3))
    assert "shape (2,)" in compare_values(np.ones(2), np.ones(3))
    msg = compare_values(np.array([1.0, 2.0, 5.0]), np.array([1.0, 2.5, 3.0]))
    assert "max abs diff 2.0" in msg and "first at index (1,)" in msg
    assert compare_values(np.array([np.nan, np.inf]), np.array([np.nan, np.inf])) is None
    assert compare_values(np.array([np.inf]), np.array([-np.inf])) is not None
    assert compare_values(np.float32(1.00001), np.float32(1.0)) is None
    assert compare_values(np.array([1, 2]), np.array([1, 3])) is not None
    # a float64 result of float32 work: float32 rounding (numpy's own cosh differs by 1 ulp
    # between its contiguous and strided loops) is within the looser tolerance
    one_ulp32 = np.array([2.610743716557214]), np.array([2.610744013200848])
    assert compare_values(*one_ulp32) is not None
    assert compare_values(*one_ulp32, tol_dtype="float32") is None


def test_node_mixing_float32_and_float64_uses_float32_tolerance():
    a = T.tensor("float32", shape=[None], name="a")
    b = T.vector("b")
    f = graphc.function([a, b], b / T.cosh(a), mode=PY_DEBUG)
    av = np.random.default_rng(0).uniform(-3, 3, size=50).astype("float32")
    np.testing.assert_allclose(f(av, np.full(50, 2.73)), 2.73 / np.cosh(av), rtol=1e-6)


# ------------------------------------------------------------------ C thunks

C_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static int add_k(PyObject *const *inputs, PyObject **outputs, long k) {
    PyObject *c = PyLong_FromLong(k);
    if (c == NULL) return -1;
    PyObject *r = PyNumber_Add(inputs[0], c);
    Py_DECREF(c);
    if (r == NULL) return -1;
    Py_XSETREF(outputs[0], r);
    return 0;
}
static int plus_one(void *p, PyObject *const *in, PyObject **out) { return add_k(in, out, 1); }
static int plus_two(void *p, PyObject *const *in, PyObject **out) { return add_k(in, out, 2); }
static int inplace(void *p, PyObject *const *in, PyObject **out) {
    PyObject *c = PyLong_FromLong(1);
    PyObject *r = PyNumber_InPlaceAdd(in[0], c);
    Py_DECREF(c);
    if (r == NULL) return -1;
    Py_XSETREF(out[0], r);
    return 0;
}
static int same(void *p, PyObject *const *in, PyObject **out) {
    Py_INCREF(in[0]);
    Py_XSETREF(out[0], in[0]);
    return 0;
}
static int stale(void *p, PyObject *const *in, PyObject **out) {
    if (out[0] != NULL) return 0; /* keeps whatever buffer it was given */
    return add_k(in, out, 1);
}
static int flat(void *p, PyObject *const *in, PyObject **out) {
    PyArrayObject *x = (PyArrayObject *)in[0];
    PyArrayObject *r = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x),
                                                          NPY_DOUBLE);
    if (r == NULL) return -1;
    const double *src = (const double *)PyArray_DATA(x); /* ignores strides */
    double *dst = (double *)PyArray_DATA(r);
    for (npy_intp i = 0; i < PyArray_SIZE(x); i++) dst[i] = src[i] + 1;
    Py_XSETREF(out[0], (PyObject *)r);
    return 0;
}

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_graphc_dbg_thunks", NULL, -1};
PyMODINIT_FUNC PyInit__graphc_dbg_thunks(void) {
    import_array();
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) return NULL;
    void *fns[] = {plus_one, plus_two, inplace, same, stale, flat};
    const char *names[] = {"plus_one", "plus_two", "inplace", "same", "stale", "flat"};
    for (int i = 0; i < 6; i++) {
        PyObject *cap = PyCapsule_New(fns[i], "graphc.thunk", NULL);
        if (cap == NULL || PyModule_AddObject(m, names[i], cap) < 0) return NULL;
    }
    return m;
}
"""


@pytest.fixture(scope="module")
def dbg_thunks(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("dbg_thunks")
    src = d / "dbg.c"
    src.write_text(C_SOURCE)
    so = d / ("_graphc_dbg_thunks" + sysconfig.get_config_var("EXT_SUFFIX"))
    paths = sysconfig.get_paths()
    cmd = [cc, "-shared", "-fPIC", "-O1", f"-I{paths['include']}", f"-I{np.get_include()}",
           str(src), "-o", str(so)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    spec = importlib.util.spec_from_file_location("_graphc_dbg_thunks", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _with_c(fn, thunk):
    """``fn`` (one AddOne node) re-linked so that its node runs ``thunk`` as its C code."""
    linked = fn.linked
    impls = [NodeImpl(perform=i.perform, c_thunk=thunk) for i in linked.impls]
    fn.vm = DebugVM(fn.maker, dataclasses.replace(linked, impls=impls), fn.maker.mode)
    return fn


@pytest.mark.parametrize(
    "thunk, exc, words",
    [
        ("plus_one", None, None),
        ("plus_two", BadThunkOutput, "output 0 of the C thunk differs from perform"),
        ("inplace", BadDestroyMap, "C thunk) modified its input 0"),
        ("same", BadViewMap, "output 0 shares memory with input 0"),
        ("stale", BadThunkOutput, "garbage-filled output buffers"),
        ("flat", BadThunkOutput, "C thunk with strided inputs"),
    ],
)
def test_c_thunk_checks(dbg_thunks, thunk, exc, words):
    x = T.vector("x")
    f = _with_c(graphc.function([x], AddOne()(x), mode=PY_DEBUG), getattr(dbg_thunks, thunk))
    xv = np.arange(5.0)
    if exc is None:
        np.testing.assert_array_equal(f(xv), xv + 1)
        return
    with pytest.raises(exc) as info:
        f(xv)
    assert words in str(info.value) and "AddOne" in str(info.value)
    np.testing.assert_array_equal(xv, np.arange(5.0))  # the caller's array is untouched


@pytest.mark.skipif(not c_available(), reason="no C linker in this build")
def test_generated_c_agrees_under_debug_mode():
    x, y = T.matrix("x"), T.matrix("y")
    outs = [T.exp(x) + y * 2, T.sum(x * y, axis=1), T.maximum(x, y).T, T.tanh(x) / (1 + y**2)]
    f = graphc.function([x, y], outs, mode=DebugMode(linker="c|py"))
    rng = np.random.default_rng(1)
    for shape in [(3, 4), (1, 5), (0, 2)]:
        xv, yv = rng.normal(size=shape), rng.normal(size=shape)
        f(xv, yv)


def test_rewrites_are_checked_on_a_copy_of_the_graph_the_maker_built(monkeypatch):
    """The graph is built from function()'s arguments once; DEBUG_MODE re-runs the
    optimizer on a clone of the maker's unoptimized graph instead of building it again."""
    import graphc.compile.maker as maker_module

    built = []
    real_build = maker_module.build_function_graph

    def counting_build(*args, **kwargs):
        spec = real_build(*args, **kwargs)
        built.append(spec.fgraph)
        return spec

    monkeypatch.setattr(maker_module, "build_function_graph", counting_build)
    x = T.vector("x")
    f = graphc.function([x], T.exp(x) * 2, mode=PY_DEBUG)
    assert len(built) == 1
    unoptimized = f.maker.unoptimized
    assert unoptimized is not None and unoptimized is not f.maker.fgraph
    assert f.vm.ref_inputs and not set(f.vm.ref_inputs) & set(unoptimized.inputs)
    np.testing.assert_allclose(f(np.array([0.0, 1.0])), 2 * np.exp([0.0, 1.0]))
    fast = graphc.function([x], T.exp(x) * 2, mode=Mode(linker="py"))
    assert fast.maker.unoptimized is None  # only a mode checking rewrites keeps a copy
