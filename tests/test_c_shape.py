"""C Shape, Shape_i, Alloc, Reshape, Join, Subtensor and IncSubtensor thunks against Python."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from array_layouts import layout
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc.graph.fg import FunctionGraph
from graphc.linker import c_available
from graphc.linker.clinker import link_cpy
from graphc.tensor import basic as tb
from graphc.tensor.subtensor import inc_subtensor, set_subtensor
from graphc.tensor.type import TensorType
from graphc.vm import make_vm

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")

C = graphc.Mode(linker="c|py", optimizer=None)
PY = graphc.Mode(linker="py", optimizer=None)
DTYPES = ("float32", "float64", "int64", "uint8", "bool")
LAYOUTS = ("C", "F", "strided", "reversed")


def values(rng, shape, dt):
    return (rng.standard_normal(shape) * 10).astype(dt)


class Linked:
    """A C-linked program run straight by the VM (outputs exactly as the thunks made them)."""

    def __init__(self, inputs, outputs):
        fg = FunctionGraph(inputs, outputs, clone=False)
        self.linked = link_cpy(fg, fg.outputs)
        self.vm = make_vm(self.linked.program)
        self.py = graphc.function(inputs, outputs, mode=PY, on_unused_input="ignore")

    def __call__(self, *args):
        return self.vm([np.asarray(a) for a in args])


class Funcs:
    def __init__(self, dt):
        x3 = TensorType(dt, (None, None, None))()
        m, u = TensorType(dt, (None, None))(), TensorType(dt, (None, None))()
        v = TensorType(dt, (None,))()
        s = TensorType(dt, ())()
        shp = TensorType("int64", (None,))()
        n, k, i = (TensorType("int64", ())() for _ in range(3))
        self.inputs = [x3, m, u, v, s, shp, n, k, i]
        outs = [
            tb.shape(x3),
            tb.Shape_i(2)(x3),
            tb.alloc(s, n, k),
            tb.alloc(v, n, tb.Shape_i(0)(v)),
            tb.Reshape(2)(x3, shp),
            tb.reshape(x3, (-1,), ndim=1),
            tb.join(0, m, u),
            tb.join(1, m, u, m),
            x3[1:, ::-1, i],
            x3[i, :k:2],
            m[::k, -1],
            x3[-1],
            inc_subtensor(x3[1:, ::-1, i], s),
            set_subtensor(m[::k, -1], s),
            inc_subtensor(x3[i, :k:2], v),  # v broadcast over the region's rows
            set_subtensor(x3[:, 1:], x3[:, :1]),  # the value a view of the array indexed
        ]
        self.outputs = outs
        self.f = Linked(self.inputs, outs)


@pytest.fixture(scope="module")
def funcs():
    return {dt: Funcs(dt) for dt in ("float64", "uint8")}


def test_nodes_report_c(funcs):
    for f in funcs.values():
        impls = f.f.linked.impls
        sched = f.f.linked.schedule
        assert all(impl.is_c for impl in impls), [
            str(n) for n, c in zip(sched, impls) if not c.is_c
        ]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dt=st.sampled_from(["float64", "uint8"]),
    a=st.integers(1, 4),
    b=st.integers(1, 4),
    c=st.integers(1, 4),
    r=st.integers(0, 3),
    k=st.integers(1, 4),
    i=st.integers(-1, 0),
    lay=st.lists(st.sampled_from(LAYOUTS), min_size=4, max_size=4),
    seed=st.integers(0, 2**31 - 1),
)
def test_matches_python(funcs, dt, a, b, c, r, k, i, lay, seed):
    rng = np.random.default_rng(seed)
    x3 = layout(values(rng, (a, b, c), dt), lay[0])
    m = layout(values(rng, (r, c), dt), lay[1])
    u = layout(values(rng, (r, c), dt), lay[2])
    v = layout(values(rng, (c,), dt), lay[3])
    args = [x3, m, u, v, values(rng, (), dt), np.array([c, -1]), np.int64(r), np.int64(k),
            np.int64(i)]  # fmt: skip
    args = [np.asarray(x) for x in args]
    before = [x.copy() for x in args]
    f = funcs[dt].f
    got, want = f(*args), f.py(*args)
    for x, y in zip(args, before):
        np.testing.assert_array_equal(x, y)
    for j, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (j, g.shape, w.shape)
        np.testing.assert_array_equal(g, w, err_msg=f"output {j}")
    # Reshape of a C-contiguous input and every Subtensor are views of the input
    if x3.flags.c_contiguous:
        assert np.shares_memory(got[4], x3) or got[4].size == 0
    for j in (8, 9, 11):
        assert got[j].base is not None
        if got[j].size:
            assert np.shares_memory(got[j], x3)


def test_views_keep_their_base_alive(funcs):
    f = funcs["float64"].f
    x3 = np.arange(24.0).reshape(2, 3, 4).copy()  # owns its data
    n = sys.getrefcount(x3)
    outs = f(x3, np.zeros((1, 4)), np.zeros((1, 4)), np.zeros(4), np.asarray(1.0),
             np.array([4, -1]), np.int64(1), np.int64(2), np.int64(0))  # fmt: skip
    assert outs[4].base is x3 and outs[11].base is x3
    assert sys.getrefcount(x3) > n
    del outs
    assert sys.getrefcount(x3) == n


def test_alloc_broadcasts_and_join_many_dtypes():
    n = TensorType("int64", ())()
    ins, outs = [n], []
    for dt in DTYPES:  # one function (one module) for every dtype
        v, m = TensorType(dt, (1, None))(), TensorType(dt, (None, None))()
        ins += [v, m]
        outs += [tb.alloc(v, 2, n, tb.Shape_i(1)(v)), tb.join(0, m, m), tb.alloc(m[0, 0], n)]
    f = graphc.function(ins, outs, mode=C)
    g = graphc.function(ins, outs, mode=PY)
    assert all(impl.is_c for impl in f.linked.impls)
    rng = np.random.default_rng(5)
    args = [np.int64(4)]
    for dt in DTYPES:
        args += [values(rng, (1, 3), dt), layout(values(rng, (2, 5), dt), "F")]
    for x, y in zip(f(*args), g(*args)):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


def test_errors(funcs):
    f = funcs["float64"].f
    ok = [np.zeros((2, 3, 4)), np.zeros((1, 4)), np.zeros((1, 4)), np.zeros(4), np.asarray(1.0),
          np.array([4, -1]), np.int64(1), np.int64(2), np.int64(0)]  # fmt: skip
    f(*ok)
    bad = list(ok)
    bad[5] = np.array([5, -1])
    with pytest.raises(ValueError, match="cannot reshape"):
        f(*bad)
    bad = list(ok)
    bad[2] = np.zeros((2, 5))
    with pytest.raises(ValueError, match="cannot join"):
        f(*bad)
    bad = list(ok)
    bad[8] = np.int64(4)
    with pytest.raises(IndexError, match="out of bounds"):
        f(*bad)
    bad = list(ok)
    bad[7] = np.int64(0)
    with pytest.raises(ValueError, match="step cannot be zero"):
        f(*bad)
    bad = list(ok)
    bad[6] = np.int64(-1)
    with pytest.raises(ValueError, match="negative"):
        f(*bad)
    bad = list(ok)
    bad[3] = np.zeros(5)  # v does not broadcast over rows of 4
    with pytest.raises(ValueError, match=r"IncSubtensor\{Inc;int64, :int64:2\}: .* shape \(5,\)"):
        f(*bad)


def test_no_reference_leaks(funcs):
    f = funcs["float64"].f
    rng = np.random.default_rng(6)
    args = [layout(rng.standard_normal((2, 3, 4)), "F"), rng.standard_normal((1, 4)),
            rng.standard_normal((1, 4)), rng.standard_normal(4), np.asarray(1.5),
            np.array([4, -1]), np.int64(1), np.int64(2), np.int64(0)]  # fmt: skip
    f(*args)
    before = [sys.getrefcount(a) for a in args]
    for _ in range(10_000):
        outs = f(*args)
        del outs
    assert [sys.getrefcount(a) for a in args] == before
    outs = f(*args)
    f(*args)  # a returned value is kept for reuse until the next call, no longer
    assert all(sys.getrefcount(o) == 3 for o in outs)


@pytest.mark.parametrize("op", [inc_subtensor, set_subtensor])
def test_in_place_writes_into_x_and_reads_an_overlapping_value_first(op):
    m = TensorType("float64", (None, None))()
    t = m * 2.0  # an intermediate the node may overwrite
    # the value is a view of the array written, overlapping the region a row down
    out = op(t[1:, ::-1], t[:-1], inplace=True)
    f, g = (graphc.function([m], out, mode=mode) for mode in (C, PY))
    node = f.maker.fgraph.outputs[0].owner
    assert node.op.destroy_map == {0: [0]}
    assert f.linked.impls[f.linked.schedule.index(node)].is_c
    a = np.arange(12.0).reshape(4, 3)
    want = 2 * a
    region = want[1:, ::-1]
    if op is set_subtensor:
        region[...] = 2 * a[:-1]
    else:
        region += 2 * a[:-1]
    np.testing.assert_array_equal(f(a), want)
    np.testing.assert_array_equal(g(a), want)
