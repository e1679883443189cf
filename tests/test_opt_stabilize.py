"""Stabilize and BLAS specialization, and the logistic-regression training step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphc
import graphc.tensor as T
from graphc.linker import c_available
from graphc.opt.engine import RewriteWarning
from graphc.scalar.basic import Composite
from graphc.tensor import blas, nnet
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.math import ElemwiseSums

pytestmark = pytest.mark.filterwarnings(f"error::{RewriteWarning.__module__}.RewriteWarning")
LINKERS = ["py"] + (["c|py"] if c_available() else [])
FAST = settings(max_examples=20, deadline=None)


def compile_(inputs, outputs, linker="py", optimizer="fast_run", excluding=("fusion",)):
    mode = graphc.Mode(linker=linker, optimizer=optimizer).excluding(*excluding)
    return graphc.function(inputs, outputs, mode=mode)


def names(f):
    out = []
    for n in f.maker.fgraph.toposort():
        if isinstance(n.op, Elemwise | ElemwiseSums):  # (a loop that also sums: its inner Op)
            sop = n.op.scalar_op if isinstance(n.op, Elemwise) else n.op.inner
            out.extend(k.op.name for k in sop.nodes) if isinstance(sop, Composite) else out.append(
                sop.name
            )
        else:
            out.append(type(n.op).__name__)
    return out


def one(ndim=1):
    return T.constant(np.ones((1,) * ndim))


@FAST
@given(hnp.arrays(np.float64, st.integers(1, 5), elements=st.floats(-30, 30, width=64)))
def test_log1p_expm1_log_sigmoid(a):
    x = T.dvector("x")
    small = a * 1e-12
    outs = [T.log(one() + x), T.exp(x) - one(), T.log(T.sigmoid(x)), T.log(one() - T.sigmoid(x))]
    for linker in LINKERS:
        f = compile_([x], outs, linker)
        ns = names(f)
        assert "log1p" in ns and "expm1" in ns and "softplus" in ns and "sigmoid" not in ns
        r = f(a)
        np.testing.assert_allclose(f(small)[0], np.log1p(small), rtol=1e-12)
        np.testing.assert_allclose(f(small)[1], np.expm1(small), rtol=1e-12)
        np.testing.assert_allclose(r[2], -np.logaddexp(0, -a), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(r[3], -np.logaddexp(0, a), rtol=1e-12, atol=1e-300)


@FAST
@given(hnp.arrays(np.float64, (3, 4), elements=st.floats(-5, 5, width=64)),
       st.lists(st.integers(0, 3), min_size=3, max_size=3))  # fmt: skip
def test_softmax_rewrites(a, labels):
    x, y = T.dmatrix("x"), T.lvector("y")
    sm = nnet.softmax(x)
    xent = nnet.crossentropy_categorical_1hot(sm, y)
    cost = xent.sum()
    (g,) = graphc.grad(cost, [x])
    ref = compile_([x, y], [T.log(sm), xent, g], optimizer="None")
    yv = np.asarray(labels, dtype="int64")
    for linker in LINKERS:
        f = compile_([x, y], [T.log(sm), xent, g], linker)
        ns = names(f)
        assert "LogSoftmax" in ns and "CrossentropySoftmax1Hot" in ns
        assert "CrossentropySoftmax1HotDx" in ns and "CrossentropyCategorical1Hot" not in ns
        for got, want in zip(f(a, yv), ref(a, yv)):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@FAST
@given(st.integers(2, 4), st.integers(2, 4), st.integers(2, 4), st.integers(0, 2**31 - 1))
def test_blas(m, n, k, seed):
    rng = np.random.default_rng(seed)

    def t(name, *shape):  # static shapes: Gemm/Gemv may absorb Z and u only when their
        return T.tensor("float64", shape=shape, name=name)  # sizes surely match

    X, Y, Z, v, u = t("X", m, k), t("Y", k, n), t("Z", m, n), t("v", k), t("u", m)
    a = T.dscalar("a")
    nX = T.neg(X)  # products used once each, so they can absorb the additions
    outs = [T.dot(X, Y), T.dot(X, v), T.dot(u, X), Z * 2.0 + a * T.dot(nX, Y), u - T.dot(nX, v)]
    vals = [rng.normal(size=(m, k)), rng.normal(size=(k, n)), rng.normal(size=(m, n)),
            rng.normal(size=k), rng.normal(size=m), 0.7]  # fmt: skip
    ref = compile_([X, Y, Z, v, u, a], outs, optimizer="None")(*vals)
    for linker in LINKERS:
        f = compile_([X, Y, Z, v, u, a], outs, linker, excluding=())
        ns = names(f)
        assert "Dot" not in ns and "Dot22" in ns and "Gemm" in ns and ns.count("Gemv") == 3
        for got, want in zip(f(*vals), ref):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        inplace = [n for n in f.maker.fgraph.toposort() if n.op.destroy_map]
        assert any(isinstance(n.op, blas.Gemv) for n in inplace)
    # u of unknown length may broadcast at run time: no Gemv absorbs it
    ud, Xd, vd = T.dvector("u"), T.dmatrix("X"), T.dvector("v")
    g = compile_([ud, Xd, vd], ud - T.dot(Xd, vd), excluding=())
    assert "Gemv" in names(g)
    np.testing.assert_allclose(g(np.ones(1), vals[0], vals[3]), 1 - vals[0] @ vals[3])


def test_logistic_regression_training_step():
    rng = np.random.default_rng(0)
    x, y, lr = T.dmatrix("x"), T.dvector("y"), T.dscalar("lr")
    w = graphc.shared(np.zeros(5), name="w")
    b = graphc.shared(np.zeros(()), name="b")
    p = T.sigmoid(T.dot(x, w) + b)
    xent = -y * T.log(p) - (one() - y) * T.log(one() - p)
    cost = xent.mean() + (T.constant(np.full(1, 0.01)) * w**2).sum()
    gw, gb = graphc.grad(cost, [w, b])
    X, Y = rng.normal(size=(20, 5)), (rng.random(20) > 0.5).astype(float)
    results = []
    for linker, opt in [("py", None)] + [(lk, "fast_run") for lk in LINKERS]:
        f = graphc.function([x, y, lr], cost, updates=[(w, w - lr * gw), (b, b - lr * gb)],
                            mode=graphc.Mode(linker=linker, optimizer=opt))  # fmt: skip
        w.set_value(np.zeros(5))
        b.set_value(np.zeros(()))
        results.append(([f(X, Y, 0.5) for _ in range(4)], w.get_value(), b.get_value()))
        if opt is None:
            continue
        nodes = f.maker.fgraph.toposort()
        assert any(isinstance(n.op, blas.Gemv | blas.Gemm | blas.Dot22) for n in nodes)
        assert any(isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, Composite)
                   for n in nodes)  # fmt: skip
        assert any(n.op.destroy_map for n in nodes)
        assert "softplus" in names(f)  # log(sigmoid(.)) stabilized
    for costs, wv, bv in results[1:]:
        np.testing.assert_allclose(costs, results[0][0], rtol=1e-10)
        np.testing.assert_allclose(wv, results[0][1], rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(bv, results[0][2], rtol=1e-10, atol=1e-14)
    assert results[0][0][-1] < results[0][0][0]
