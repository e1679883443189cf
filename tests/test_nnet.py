"""graphc.tensor.nnet against numpy / scipy references and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import graphc
import graphc.tensor as T
from graphc.gradient import verify_grad
from graphc.tensor import math as tm
from graphc.tensor import nnet
from graphc.tensor.basic import shape_tuple
from graphc.tensor.type import TensorType

SETTINGS = settings(max_examples=25, deadline=None)
FLOATS = st.sampled_from(["float32", "float64"])


def _var(value, name="x"):
    return TensorType(str(value.dtype), [1 if s == 1 else None for s in value.shape])(name)


def _tol(dtype):
    return 1e-5 if dtype == "float32" else 1e-12


@st.composite
def arrays_and_axis(draw, min_size=0, scale=3.0):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(min_size, 4), min_size=ndim, max_size=ndim)))
    axis = draw(st.integers(-ndim, ndim - 1))
    dtype = draw(FLOATS)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    big = draw(st.booleans())
    x = rng.standard_normal(shape) * (300.0 if big else scale)
    return x.astype(dtype), axis, rng


def _check_shape(out, x, xv):
    node = out.owner
    (inferred,) = node.op.infer_shape(None, node, [shape_tuple(i) for i in node.inputs])
    assert tuple(int(s.eval({x: xv})) for s in inferred) == xv.shape


@SETTINGS
@given(arrays_and_axis())
def test_softmax_and_log_softmax_match_scipy(case):
    xv, axis, _ = case
    x = _var(xv)
    sm = nnet.softmax(x, axis).eval({x: xv})
    lsm = nnet.log_softmax(x, axis).eval({x: xv})
    x64 = xv.astype("float64")
    assert sm.dtype == xv.dtype == lsm.dtype and sm.shape == xv.shape
    assert np.all(np.isfinite(sm)) and np.all(np.isfinite(lsm))
    if xv.size == 0:  # scipy cannot reduce an empty array
        return
    np.testing.assert_allclose(sm, special.softmax(x64, axis=axis), rtol=1e-5, atol=_tol(xv.dtype))
    np.testing.assert_allclose(
        lsm, special.log_softmax(x64, axis=axis), rtol=1e-5, atol=1e-4 if xv.dtype == "float32"
        else 1e-10,
    )  # fmt: skip
    _check_shape(nnet.softmax(x, axis), x, xv)
    _check_shape(nnet.log_softmax(x, axis), x, xv)


@SETTINGS
@given(arrays_and_axis(min_size=1, scale=1.0))
def test_softmax_grads(case):
    xv, axis, rng = case
    if np.abs(xv).max() > 10:
        xv = (xv / np.abs(xv).max() * 3).astype(xv.dtype)
    verify_grad(lambda v: nnet.softmax(v, axis), [xv], n_tests=1, rng=rng)
    verify_grad(lambda v: nnet.log_softmax(v, axis), [xv], n_tests=1, rng=rng)


def test_softmax_ops_props_and_errors():
    m = T.dmatrix("m")
    assert nnet.softmax(m).owner.op == nnet.Softmax(1) == nnet.softmax(m, axis=1).owner.op
    assert str(nnet.Softmax(1)) == "Softmax{axis=1}"
    assert str(nnet.LogSoftmax(0)) == "LogSoftmax{axis=0}"
    with pytest.raises(ValueError, match="axis 2"):
        nnet.softmax(m, axis=2)
    with pytest.raises(TypeError, match="Scalar"):
        nnet.softmax(T.dscalar("s"))
    i = T.imatrix("i")
    assert nnet.softmax(i).dtype == "float64"
    np.testing.assert_allclose(
        nnet.softmax(i).eval({i: np.array([[0, 1]], dtype="int32")}), special.softmax([[0, 1]], 1)
    )


@st.composite
def logits_and_labels(draw, min_rows=0):
    n = draw(st.integers(min_rows, 4))
    k = draw(st.integers(1, 4))
    dtype = draw(FLOATS)
    idx_dtype = draw(st.sampled_from(["int32", "int64"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = (rng.standard_normal((n, k)) * draw(st.sampled_from([1.0, 50.0]))).astype(dtype)
    y = rng.integers(0, k, size=n).astype(idx_dtype)
    return x, y, rng


@SETTINGS
@given(logits_and_labels())
def test_crossentropy_softmax_1hot_values(case):
    xv, yv, _ = case
    x, y = _var(xv, "x"), _var(yv, "y")
    nll, sm = nnet.crossentropy_softmax_1hot(x, y)
    vals = {x: xv, y: yv}
    x64 = xv.astype("float64")
    want_nll = special.logsumexp(x64, axis=1) - x64[np.arange(len(yv)), yv]
    got_nll, got_sm = nll.eval(vals), sm.eval(vals)
    assert got_nll.dtype == xv.dtype and got_nll.shape == (len(yv),)
    assert np.all(np.isfinite(got_nll))
    np.testing.assert_allclose(got_nll, want_nll, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got_sm, special.softmax(x64, axis=1), rtol=1e-5, atol=1e-6)
    # the unfused graph agrees when probabilities are not tiny
    if xv.size and np.abs(xv).max() < 10:
        ref = nnet.categorical_crossentropy(nnet.softmax(x), y).eval(vals)
        np.testing.assert_allclose(got_nll, ref, rtol=1e-4, atol=1e-5)
        onehot = np.eye(xv.shape[1], dtype=xv.dtype)[yv]
        t = _var(onehot, "t")
        dense = nnet.categorical_crossentropy(nnet.softmax(x), t).eval({x: xv, t: onehot})
        np.testing.assert_allclose(dense, ref, rtol=1e-4, atol=1e-5)
    _check_infer = nll.owner.op.infer_shape(None, nll.owner, [shape_tuple(x), shape_tuple(y)])
    assert tuple(int(s.eval(vals)) for s in _check_infer[0]) == (len(yv),)
    assert tuple(int(s.eval(vals)) for s in _check_infer[1]) == xv.shape


@SETTINGS
@given(logits_and_labels(min_rows=1))
def test_crossentropy_grads(case):
    xv, yv, rng = case
    xv = np.clip(xv, -3, 3)
    verify_grad(lambda a, b: nnet.crossentropy_softmax_1hot(a, b)[0], [xv, yv], n_tests=1, rng=rng)
    verify_grad(lambda a, b: nnet.crossentropy_softmax_1hot(a, b)[1], [xv, yv], n_tests=1, rng=rng)

    def both(a, b):
        nll, sm = nnet.crossentropy_softmax_1hot(a, b)
        return T.sum(nll) + T.sum(sm * sm)

    verify_grad(both, [xv, yv], n_tests=1, rng=rng)
    # probabilities far enough from 0 for finite differences
    probs = special.softmax(np.clip(xv, -1, 1).astype("float64"), axis=1).astype(xv.dtype)
    verify_grad(nnet.categorical_crossentropy, [probs, yv], n_tests=1, rng=rng)
    onehot = np.eye(xv.shape[1], dtype=xv.dtype)[yv]
    verify_grad(
        lambda p: nnet.categorical_crossentropy(p, T.constant(onehot)), [probs], rng=rng, n_tests=1
    )


def test_crossentropy_bad_indices_and_types():
    x, y = T.dmatrix("x"), T.lvector("y")
    nll = nnet.crossentropy_categorical_1hot(x, y)
    with pytest.raises(IndexError):
        nll.eval({x: np.full((2, 3), 0.3), y: np.array([0, 3])})
    with pytest.raises(IndexError):
        nnet.crossentropy_softmax_1hot(x, y)[0].eval({x: np.ones((1, 2)), y: np.array([-1])})
    with pytest.raises(TypeError, match="integer vector"):
        nnet.crossentropy_softmax_1hot(x, T.dvector("f"))
    with pytest.raises(TypeError, match="categorical_crossentropy"):
        nnet.categorical_crossentropy(x, T.dvector("f"))
    a = TensorType("float64", (2, None))("a")
    with pytest.raises(ValueError, match="rows"):
        nnet.crossentropy_softmax_1hot(a, TensorType("int64", (3,))("b"))


def test_crossentropy_softmax_1hot_with_bias():
    x, b, y = T.dmatrix("x"), T.dvector("b"), T.lvector("y")
    xv, bv, yv = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 0.5]), np.array([2, 0])
    nll, _ = nnet.crossentropy_softmax_1hot_with_bias(x, b, y)
    z = xv + bv
    want = special.logsumexp(z, axis=1) - z[[0, 1], yv]
    np.testing.assert_allclose(nll.eval({x: xv, b: bv, y: yv}), want)


@SETTINGS
@given(
    shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple),
    dtype=FLOATS, seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_binary_crossentropy(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    o = rng.uniform(0.05, 0.95, shape).astype(dtype)
    t = rng.uniform(0, 1, shape).astype(dtype)
    ov, tv = _var(o, "o"), _var(t, "t")
    got = nnet.binary_crossentropy(ov, tv).eval({ov: o, tv: t})
    o64, t64 = o.astype("float64"), t.astype("float64")
    want = -(t64 * np.log(o64) + (1 - t64) * np.log(1 - o64))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)
    verify_grad(nnet.binary_crossentropy, [o, t], n_tests=1, rng=rng)


@SETTINGS
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
    dtype=st.sampled_from(["float32", "float64", "int32"]),
    alpha=st.sampled_from([0, 0.1, 0.5]), seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_relu(shape, dtype, alpha, seed):
    rng = np.random.default_rng(seed)
    xv = (rng.standard_normal(shape) * 3).astype(dtype)
    x = _var(xv)
    out = nnet.relu(x, alpha)
    got = out.eval({x: xv})
    want = np.where(xv > 0, xv, alpha * xv)
    assert got.shape == xv.shape
    if alpha == 0:
        assert out.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    if dtype != "int32" and xv.size:
        pts = np.where(np.abs(xv) < 0.1, 0.5, xv).astype(dtype)  # away from the kink
        verify_grad(lambda v: nnet.relu(v, alpha), [pts], n_tests=1, rng=rng)


def test_sigmoid_and_softplus_are_the_elemwise_ones():
    assert nnet.sigmoid is tm.sigmoid and nnet.softplus is tm.softplus
    assert T.nnet.sigmoid is tm.sigmoid
    x = T.dvector("x")
    xv = np.array([-800.0, 0.0, 3.0])
    np.testing.assert_allclose(nnet.sigmoid(x).eval({x: xv}), special.expit(xv))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 6), dtype=FLOATS, seed=st.integers(0, 2**32 - 1))
def test_softmax_of_a_vector_is_a_row_as_in_theano(n, dtype, seed):
    rng = np.random.default_rng(seed)
    xv = (rng.standard_normal(n) * 3).astype(dtype)
    x = T.vector("x", dtype=dtype)
    sm, lsm = nnet.softmax(x), nnet.log_softmax(x)
    assert sm.type.shape == (1, None) == lsm.type.shape
    assert nnet.logsoftmax is nnet.log_softmax
    want = special.softmax(xv.astype("float64"))[None, :]
    for mode in (graphc.Mode(linker="c|py"), graphc.Mode(linker="py", optimizer=None)):
        got_sm, got_lsm = graphc.function([x], [sm, lsm], mode=mode)(xv)
        assert got_sm.shape == (1, n) == got_lsm.shape
        np.testing.assert_allclose(got_sm, want, rtol=1e-5, atol=_tol(dtype))
        np.testing.assert_allclose(got_lsm, np.log(want), rtol=1e-5, atol=1e-5)
    # an explicit axis keeps the vector a vector; matrices are unchanged
    assert nnet.softmax(x, axis=0).type.shape == (None,)
    assert nnet.softmax(T.dmatrix("m")).type.shape == (None, None)
    xv64 = xv.astype("float64")
    verify_grad(nnet.softmax, [xv64], n_tests=1, rng=rng)
    verify_grad(nnet.log_softmax, [xv64], n_tests=1, rng=rng)
    g = graphc.grad((nnet.softmax(x)[0, 0]).astype("float64"), x)
    assert g.type.ndim == 1
