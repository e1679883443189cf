"""Elemwise fusion, and random expression graphs agreeing across optimizers and numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.linker import c_available
from graphc.opt.engine import RewriteWarning
from graphc.opt.fusion import MAX_INPUTS, is_heavy
from graphc.scalar.basic import Composite
from graphc.tensor.elemwise import Elemwise

pytestmark = pytest.mark.filterwarnings(f"error::{RewriteWarning.__module__}.RewriteWarning")
LINKERS = ["py"] + (["c|py"] if c_available() else [])


def composites(f):
    return [n for n in f.maker.fgraph.toposort()
            if isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, Composite)]  # fmt: skip


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_chain_with_broadcast_fuses_to_one_loop(linker, dtype):
    x, y = T.matrix("x", dtype=dtype), T.matrix("y", dtype=dtype)
    b = T.vector("b", dtype=dtype)
    out = T.exp(x) * y + T.tanh(b) - x * x
    f = graphc.function([x, y, b], out, mode=graphc.Mode(linker=linker))
    nodes = f.maker.fgraph.toposort()
    comp = composites(f)
    # tanh(b) runs on the small vector (fusing it would recompute it for every row)
    ew = [n for n in nodes if isinstance(n.op, Elemwise)]
    assert len(comp) == 1 and len(ew) == 2 and ew[0].op.scalar_op.name == "tanh"
    assert [str(i) for i in comp[0].inputs] == ["x", "y", "DimShuffle{x,0}.0"]
    assert "sqr" in comp[0].op.scalar_op.name or "(i0 * i0)" in comp[0].op.scalar_op.name
    rng = np.random.default_rng(0)
    xv, yv, bv = (rng.normal(size=s).astype(dtype) for s in ((3, 4), (3, 4), (4,)))
    want = np.exp(xv) * yv + np.tanh(bv) - xv * xv
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(f(xv, yv, bv), want, rtol=tol, atol=tol)


def test_shared_intermediate_is_computed_once():
    x = T.dvector("x")
    e = T.exp(x) + 1.0
    f = graphc.function([x], [T.sqrt(e) * 2.0, e.sum()], mode=graphc.Mode(linker="py"))
    (loop,) = f.maker.fgraph.toposort()  # one loop: sqrt(e) * 2 and sum(e)
    assert [n.op.name for n in loop.op.inner.nodes].count("exp") == 1
    g = graphc.function([x], [T.sqrt(e) * 2.0, e.sum()],
                        mode=graphc.Mode(linker="py").excluding("multi_fusion"))  # fmt: skip
    names = [n.op.scalar_op.name for n in g.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]
    assert sum("exp" in s for s in names) == 1  # without it, e stays a node of its own
    v = np.linspace(0, 1, 4)
    a, s = f(v)
    np.testing.assert_allclose(a, np.sqrt(np.exp(v) + 1) * 2)
    np.testing.assert_allclose(s, (np.exp(v) + 1).sum())


def test_input_cap():
    xs = [T.dvector(f"x{k}") for k in range(MAX_INPUTS + 8)]
    out = xs[0]
    for v in xs[1:]:
        out = T.tanh(out) + v
    f = graphc.function(xs, out, mode=graphc.Mode(linker="py"))
    comp = composites(f)
    assert len(comp) >= 2 and all(len(n.inputs) <= MAX_INPUTS for n in comp)
    vals = [np.full(2, 0.01 * k) for k in range(len(xs))]
    want = vals[0]
    for v in vals[1:]:
        want = np.tanh(want) + v
    np.testing.assert_allclose(f(*vals), want)


# ------------------------------------------------------------------ random graphs

UNARY = ["exp", "tanh", "neg", "sin", "abs", "sqr", "sigmoid"]
BINARY = ["add", "mul", "sub", "maximum"]


@st.composite
def graphs(draw):
    """A random expression over a matrix, a row, a vector and a scalar (numpy alongside)."""
    steps = draw(st.lists(st.tuples(st.sampled_from(UNARY + BINARY + ["sum", "pow2"]),
                                    st.integers(0, 50), st.integers(0, 50)),
                          min_size=1, max_size=10))  # fmt: skip
    return steps


def _build(steps, pool_sym, pool_np):
    syms, nps = list(pool_sym), list(pool_np)
    for op, i, j in steps:
        a, an = syms[i % len(syms)], nps[i % len(nps)]
        b, bn = syms[j % len(syms)], nps[j % len(nps)]
        if op in UNARY:
            s = getattr(T, op)(a)
            with np.errstate(all="ignore"):
                n = {
                    "sqr": np.square,
                    "neg": np.negative,
                    "abs": np.abs,
                    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                }.get(op, getattr(np, op, None))(an)
        elif op in BINARY:
            s = getattr(T, op)(a, b)
            n = {"add": np.add, "mul": np.multiply, "sub": np.subtract,
                 "maximum": np.maximum}[op](an, bn)  # fmt: skip
        elif op == "pow2":
            s, n = a ** T.constant(np.full((1,) * a.ndim, 2.0)), an**2.0
        else:
            if a.ndim == 0:
                continue
            s, n = a.sum(axis=0), an.sum(axis=0)
        s = T.tanh(s) if op in ("mul", "pow2", "exp", "sqr") else s  # keep values bounded
        n = np.tanh(n) if op in ("mul", "pow2", "exp", "sqr") else n
        syms.append(s)
        nps.append(np.asarray(n))
    k = min(len(pool_sym), len(syms) - 1)  # an intermediate (or an input) as a second output
    return [syms[-1], syms[k]], [nps[-1], nps[k]]


@settings(max_examples=25, deadline=None)
@given(graphs(), st.integers(0, 2**31 - 1))
def test_random_graphs_agree(steps, seed):
    rng = np.random.default_rng(seed)
    m, r, v, s = T.dmatrix("m"), T.row("r", dtype="float64"), T.dvector("v"), T.dscalar("s")
    vals = [rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (1, 4)), rng.uniform(-1, 1, 4),
            np.float64(rng.uniform(-1, 1))]  # fmt: skip
    outs, wants = _build(steps, [m, r, v, s], vals)
    results = []
    for linker, opt in [("py", None), ("py", "fast_compile"), ("py", "fast_run")] + [
        (lk, "fast_run") for lk in LINKERS[1:]
    ]:
        f = graphc.function([m, r, v, s], outs, mode=graphc.Mode(linker=linker, optimizer=opt),
                            on_unused_input="ignore")  # fmt: skip
        results.append(f(*vals))
        before = [x.copy() for x in vals[:3]]
        f(*vals)
        for b, a in zip(before, vals[:3]):
            np.testing.assert_array_equal(a, b)  # inputs never overwritten
    for res in results:
        for got, w in zip(res, wants):
            np.testing.assert_allclose(got, w, rtol=1e-9, atol=1e-12)


def _loops(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]


def test_heavy_functions_share_a_loop_only_when_independent():
    # exp and tanh of different values: one loop; tanh of (a function of) exp: two loops,
    # since one loop would make each element wait on exp before tanh can start
    x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
    apart = graphc.function([x, y, z], T.exp(x) * y + T.tanh(z) - x**2)
    assert len(_loops(apart)) == 1
    chained = graphc.function([x, y], T.tanh(T.exp(x) * 2.0) + y)
    loops = _loops(chained)
    assert len(loops) == 2
    assert [is_heavy(n) for n in loops] == [True, True]
    v, w = np.linspace(-2, 2, 9), np.linspace(0, 1, 9)
    np.testing.assert_allclose(chained(v, w), np.tanh(np.exp(v) * 2.0) + w, rtol=1e-12)
    np.testing.assert_allclose(apart(v, w, v + w), np.exp(v) * w + np.tanh(v + w) - v**2,
                               rtol=1e-12)  # fmt: skip
