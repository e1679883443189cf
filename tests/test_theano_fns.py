"""Theano's ``theano.tensor`` functions graphc adds, each against numpy (or scipy)."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.testing import verify_grad

RNG = np.random.default_rng(7)


def _run(outputs, inputs, *values):
    return graphc.function(list(inputs), outputs, on_unused_input="ignore")(*values)


def test_isnan_isinf_isclose_allclose_match_numpy():
    a, b = T.dvectors("a", "b")
    av = np.array([0.0, np.nan, np.inf, -np.inf, 1.0, 1.0, np.inf, 1e10, np.nan])
    bv = np.array([0.0, np.nan, np.inf, np.inf, 1.0 + 1e-9, 1.1, 1.0, 1.00001e10, 1.0])
    got = _run(
        [T.isnan(a), T.isinf(a), T.isclose(a, b), T.isclose(a, b, equal_nan=True)], [a, b], av, bv
    )
    ref = [np.isnan(av), np.isinf(av), np.isclose(av, bv), np.isclose(av, bv, equal_nan=True)]
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(np.asarray(g, bool), r)
    assert bool(_run(T.allclose(a, b), [a, b], av[:1], bv[:1])) == np.allclose(av[:1], bv[:1])
    assert bool(_run(T.allclose(a, b), [a, b], av, bv)) == np.allclose(av, bv)
    i = T.ivector("i")
    iv = np.array([1, 0, -3], dtype="int32")
    got = _run([T.isnan(i), T.isinf(i)], [i], iv)
    for g in got:
        np.testing.assert_array_equal(np.asarray(g, bool), np.zeros(3, bool))


def test_nonzero_family_matches_numpy():
    m = T.dmatrix("m")
    mv = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, -1.0]])
    rows, cols = T.nonzero(m)
    got = _run(
        [rows, cols, T.nonzero(m, return_matrix=True), T.flatnonzero(m), T.nonzero_values(m)],
        [m],
        mv,
    )
    r, c = np.nonzero(mv)
    np.testing.assert_array_equal(got[0], r)
    np.testing.assert_array_equal(got[1], c)
    np.testing.assert_array_equal(got[2], np.vstack([r, c]))
    np.testing.assert_array_equal(got[3], np.flatnonzero(mv))
    np.testing.assert_array_equal(got[4], mv[mv != 0])
    assert _run(T.flatnonzero(m), [m], np.zeros((2, 2))).shape == (0,)
    with pytest.raises(ValueError, match="at least one dimension"):
        T.nonzero(T.dscalar())


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_diag_diagonal_and_triangles_match_numpy(k):
    v, m = T.dvector("v"), T.dmatrix("m")
    vv, mv = RNG.normal(size=4), RNG.normal(size=(4, 5))
    got = _run(
        [T.diag(v, k), T.diag(m, k), T.tril(m, k), T.triu(m, k), T.tri(3, 5, k)], [v, m], vv, mv
    )
    ref = [np.diag(vv, k), np.diag(mv, k), np.tril(mv, k), np.triu(mv, k), np.tri(3, 5, k)]
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)


def test_diagonal_of_a_tensor3_and_the_diagonal_gradients():
    x = T.dtensor3("x")
    xv = RNG.normal(size=(3, 4, 5))
    got = _run(T.diagonal(x, 1, 0, 2), [x], xv)
    np.testing.assert_array_equal(got, np.diagonal(xv, 1, 0, 2))
    verify_grad(lambda t: T.diagonal(t, 1, 0, 2) * 2.0, [xv], rng=np.random.RandomState(0))
    verify_grad(lambda t: T.diag(t, -1), [RNG.normal(size=(4, 3))], rng=np.random.RandomState(1))
    verify_grad(lambda t: T.diag(t, 2), [RNG.normal(size=3)], rng=np.random.RandomState(2))
    with pytest.raises(ValueError, match="vector or a matrix"):
        T.diag(x)


@pytest.mark.parametrize("shift", [0, 1, -2, 7, 10])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_roll_matches_numpy(shift, axis):
    x, s = T.dmatrix("x"), T.lscalar("s")
    xv = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(
        _run(T.roll(x, s, axis), [x, s], xv, shift), np.roll(xv, shift, axis)
    )
    np.testing.assert_array_equal(_run(T.roll(x, shift, axis), [x], xv), np.roll(xv, shift, axis))


def test_rearrangements_match_numpy():
    x = T.TensorType("float64", (2, 1, 3, 1))("x")
    xv = RNG.normal(size=(2, 1, 3, 1))
    got = _run(
        [
            T.squeeze(x),
            T.squeeze(x, 1),
            T.swapaxes(x, 0, 2),
            T.transpose(x),
            T.transpose(x, (1, 0, 3, 2)),
            T.shape_padaxis(x, 1),
            T.shape_padaxis(x, -1),
        ],
        [x],
        xv,
    )
    ref = [
        np.squeeze(xv),
        np.squeeze(xv, 1),
        np.swapaxes(xv, 0, 2),
        np.transpose(xv),
        np.transpose(xv, (1, 0, 3, 2)),
        np.expand_dims(xv, 1),
        np.expand_dims(xv, -1),
    ]
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)
    with pytest.raises(ValueError, match="not known to have length 1"):
        T.squeeze(x, 0)
    with pytest.raises(IndexError, match="out of range"):
        T.shape_padaxis(x, 6)


def test_stacking_helpers_match_numpy():
    a, b = T.dmatrices("a", "b")
    av, bv = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    got = _run([T.vertical_stack(a, b), T.horizontal_stack(a, b)], [a, b], av, bv)
    np.testing.assert_array_equal(got[0], np.vstack([av, bv]))
    np.testing.assert_array_equal(got[1], np.hstack([av, bv]))
    p, q, r, s = T.dscalars("p", "q", "r", "s")
    got = _run(T.stacklists([[p, q], [r, s]]), [p, q, r, s], 1.0, 2.0, 3.0, 4.0)
    np.testing.assert_array_equal(got, np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_inverse_permutation_and_vector_length():
    perm = T.lvector("perm")
    pv = RNG.permutation(7)
    got = _run(T.inverse_permutation(perm), [perm], pv)
    np.testing.assert_array_equal(got, np.argsort(pv))
    np.testing.assert_array_equal(pv[got], np.arange(7))
    assert T.get_vector_length(T.TensorType("float64", (5,))()) == 5
    with pytest.raises(ValueError, match="not known"):
        T.get_vector_length(T.dvector())


def test_elementwise_helpers_match_numpy():
    x, y = T.dvectors("x", "y")
    xv = np.array([-2.7, -0.5, -1e-9, 0.0, 0.3, 1.5, 2.5])
    yv = np.array([1.0, -2.0, 3.0, 0.5, 2.0, -1.0, 4.0])
    outs = [
        T.trunc(x),
        T.deg2rad(x),
        T.rad2deg(x),
        T.inv(y),
        T.square(x),
        T.largest(x, y),
        T.smallest(x, y, 0.0),
        T.ptp(x),
        T.arcsinh(x),
        T.arctanh(x / 3),
        T.arccosh(abs(x) + 1),
    ]
    ref = [
        np.trunc(xv),
        np.deg2rad(xv),
        np.rad2deg(xv),
        1 / yv,
        xv**2,
        np.maximum(xv, yv),
        np.minimum(np.minimum(xv, yv), 0.0),
        np.ptp(xv),
        np.arcsinh(xv),
        np.arctanh(xv / 3),
        np.arccosh(np.abs(xv) + 1),
    ]
    for g, r in zip(_run(outs, [x, y], xv, yv), ref):
        np.testing.assert_allclose(g, r, rtol=1e-13, atol=0)
    m = T.dmatrix("m")
    mv = RNG.normal(size=(3, 4))
    mx, am = _run(list(T.max_and_argmax(m, 1)), [m], mv)
    np.testing.assert_array_equal(mx, mv.max(1))
    np.testing.assert_array_equal(am, mv.argmax(1))
    i, j = T.lvectors("i", "j")
    iv, jv = np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])
    q, r = _run(list(T.divmod(i, j)), [i, j], iv, jv)
    np.testing.assert_array_equal(q, iv // jv)
    np.testing.assert_array_equal(r, iv % jv)
    np.testing.assert_array_equal(_run(T.floor_div(i, j), [i, j], iv, jv), iv // jv)


def test_nnet_softsign_hard_sigmoid_elu_match_numpy():
    x = T.dvector("x")
    xv = np.array([-4.0, -2.5, -0.3, 0.0, 0.7, 2.5, 9.0])
    got = _run(
        [T.nnet.softsign(x), T.nnet.hard_sigmoid(x), T.nnet.elu(x), T.nnet.elu(x, 0.5)], [x], xv
    )
    ref = [
        xv / (1 + np.abs(xv)),
        np.clip(0.2 * xv + 0.5, 0, 1),
        np.where(xv > 0, xv, np.expm1(xv)),
        np.where(xv > 0, xv, 0.5 * np.expm1(xv)),
    ]
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-14, atol=1e-15)
    verify_grad(T.nnet.softsign, [xv], rng=np.random.RandomState(3))


def test_nlinalg_matches_numpy_linalg():
    from graphc.tensor import nlinalg

    a, b = T.dmatrices("a", "b")
    av = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    bv = RNG.normal(size=(4, 3))
    outs = [
        nlinalg.matrix_inverse(a),
        nlinalg.det(a),
        nlinalg.trace(a),
        nlinalg.pinv(b),
        nlinalg.matrix_dot(a, a, b),
        nlinalg.extract_diag(a),
        nlinalg.alloc_diag(a[0]),
    ]
    ref = [
        np.linalg.inv(av),
        np.linalg.det(av),
        np.trace(av),
        np.linalg.pinv(bv),
        av @ av @ bv,
        np.diag(av),
        np.diag(av[0]),
    ]
    for g, r in zip(_run(outs, [a, b], av, bv), ref):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)
    verify_grad(nlinalg.matrix_inverse, [av], rng=np.random.RandomState(4))
    verify_grad(nlinalg.det, [av], rng=np.random.RandomState(5))
    with pytest.raises(ValueError, match="a matrix is needed"):
        nlinalg.det(T.dvector())


def test_broadcastable_flags_follow_theano():
    x = T.dmatrix("x")
    col = T.addbroadcast(x, 1)
    assert col.broadcastable == (False, True)
    assert T.unbroadcast(col, 1).broadcastable == (False, False)
    assert T.patternbroadcast(x, (True, False)).broadcastable == (True, False)
    y = T.dmatrix("y")
    f = graphc.function([x, y], [col + y, T.grad((col * y).sum(), x)])
    xv, yv = RNG.normal(size=(3, 1)), RNG.normal(size=(3, 4))
    s, g = f(xv, yv)
    np.testing.assert_array_equal(s, xv + yv)  # numpy's broadcasting
    np.testing.assert_allclose(g, yv.sum(axis=1, keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match="axis 1 should have length 1 but has 4"):
        graphc.function([x], T.addbroadcast(x, 1))(yv)
    with pytest.raises(ValueError, match="2 flags for 1 axes"):
        T.patternbroadcast(T.dvector(), (True, False))


def test_counting_and_filling_match_numpy():
    x, m = T.dmatrix("x"), T.dmatrix("m")
    xv = RNG.normal(size=(3, 5))
    got = _run([T.diff(x), T.diff(x, 2, axis=0), T.diff(x, 3)], [x], xv)
    for g, r in zip(got, [np.diff(xv), np.diff(xv, 2, axis=0), np.diff(xv, 3)]):
        np.testing.assert_allclose(g, r, rtol=1e-14, atol=1e-15)
    y, w = T.lvector("y"), T.dvector("w")
    yv, wv = np.array([2, 0, 2, 5, 1]), RNG.normal(size=5)
    hot, counts, weighted, padded = _run(
        [
            T.to_one_hot(y, 6, "float64"),
            T.bincount(y),
            T.bincount(y, w),
            T.bincount(y, minlength=9),
        ],
        [y, w],
        yv,
        wv,
    )
    np.testing.assert_array_equal(hot, np.eye(6)[yv])
    np.testing.assert_array_equal(counts, np.bincount(yv))
    np.testing.assert_allclose(weighted, np.bincount(yv, wv), rtol=1e-14)
    np.testing.assert_array_equal(padded, np.bincount(yv, minlength=9))
    c = T.lvector("c")
    cv = np.array([0, 1, 1])
    got = _run([T.compress(c, x, axis=0), T.compress(c, x)], [c, x], cv, xv)
    np.testing.assert_array_equal(got[0], np.compress(cv, xv, axis=0))
    np.testing.assert_array_equal(got[1], np.compress(cv, xv))
    filled = np.array(xv, copy=True)
    np.fill_diagonal(filled, 7.0)
    np.testing.assert_array_equal(_run(T.fill_diagonal(m, 7.0), [m], xv), filled)
    verify_grad(
        lambda a, v: T.fill_diagonal(a, v) * 3.0, [xv, np.array(0.5)], rng=np.random.RandomState(6)
    )
    with pytest.raises(TypeError, match="vector of ints"):
        T.bincount(T.dvector())
