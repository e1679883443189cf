"""``graphc.tensor.dot`` of operands with more than 2 dimensions, as numpy's and Theano's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.gradient import verify_grad
from graphc.tensor.blas import Dot
from graphc.tensor.type import TensorType

SETTINGS = settings(max_examples=30, deadline=None)
C = graphc.Mode(linker="c|py", optimizer="fast_run")
PY = graphc.Mode(linker="py", optimizer="fast_run")
PY_NOOPT = graphc.Mode(linker="py", optimizer=None)


@st.composite
def nd_operands(draw):
    """Shapes of ``a`` and ``b`` for ``numpy.dot`` with at least one of them above 2-d."""
    na = draw(st.integers(1, 4))
    nb = draw(st.integers(1, 4))
    if na <= 2 and nb <= 2:
        na = 3 if draw(st.booleans()) else na
        nb = nb if na > 2 else 3
    k = draw(st.integers(0, 4))
    sa = [draw(st.integers(0, 3)) for _ in range(na - 1)] + [k]
    sb = [draw(st.integers(0, 3)) for _ in range(nb)]
    sb[max(0, nb - 2)] = k
    return tuple(sa), tuple(sb)


def _vars(sa, sb, dtype="float64"):
    return TensorType(dtype, (None,) * len(sa))("a"), TensorType(dtype, (None,) * len(sb))("b")


@SETTINGS
@given(shapes=nd_operands(), dtype=st.sampled_from(["float32", "float64", "int64"]),
       seed=st.integers(0, 2**32 - 1))  # fmt: skip
def test_nd_dot_matches_numpy_under_both_linkers(shapes, dtype, seed):
    sa, sb = shapes
    rng = np.random.default_rng(seed)
    av = (rng.standard_normal(sa) * 3).astype(dtype)
    bv = (rng.standard_normal(sb) * 3).astype(dtype)
    a, b = _vars(sa, sb, dtype)
    out = T.dot(a, b)
    want = np.dot(av, bv)
    assert out.ndim == want.ndim and out.dtype == str(want.dtype)
    got_c = graphc.function([a, b], out, mode=C)(av, bv)
    got_py = graphc.function([a, b], out, mode=PY)(av, bv)
    tol = {"float32": 1e-4, "float64": 1e-12}.get(dtype, 0)
    scale = 1 + np.abs(want).max(initial=0)
    assert got_c.shape == want.shape == got_py.shape
    np.testing.assert_allclose(got_c, want, rtol=0, atol=tol * scale * max(sa[-1], 1))
    np.testing.assert_allclose(got_py, got_c, rtol=0, atol=tol * scale * max(sa[-1], 1))


@settings(max_examples=15, deadline=None)
@given(shapes=nd_operands(), seed=st.integers(0, 2**32 - 1))
def test_nd_dot_gradient_matches_finite_differences(shapes, seed):
    sa, sb = shapes
    rng = np.random.default_rng(seed)
    verify_grad(T.dot, [rng.standard_normal(sa), rng.standard_normal(sb)], rng=rng)


@settings(max_examples=20, deadline=None)
@given(shapes=nd_operands())
def test_nd_dot_shape_is_inferred_without_computing_the_product(shapes):
    sa, sb = shapes
    a, b = _vars(sa, sb)
    out = T.dot(a, b)
    f = graphc.function([a, b], out.shape, mode=C)
    assert tuple(f(np.zeros(sa), np.zeros(sb))) == np.dot(np.zeros(sa), np.zeros(sb)).shape
    assert not any(isinstance(n.op, Dot) for n in f.maker.fgraph.toposort())


def test_dot_of_a_3d_tensor_and_a_matrix_is_one_matrix_product():
    """Theano's recurrent programs: ``dot(x, W)`` for x of shape (time, batch, n_in)."""
    x, w = T.tensor3("x"), T.dmatrix("W")
    out = T.dot(x, w)
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((5, 4, 3)), rng.standard_normal((3, 2))
    f = graphc.function([x, w], out, mode=C)
    np.testing.assert_allclose(f(xv, wv), np.einsum("tbi,ij->tbj", xv, wv), atol=1e-12)
    products = [n for n in f.maker.fgraph.toposort() if "Dot" in str(n.op) or "Gemm" in str(n.op)]
    assert len(products) == 1
    gx, gw = graphc.grad((out**2).sum(), [x, w])
    g = graphc.function([x, w], [gx, gw], mode=PY_NOOPT)(xv, wv)
    up = 2 * np.einsum("tbi,ij->tbj", xv, wv)
    np.testing.assert_allclose(g[0], np.einsum("tbj,ij->tbi", up, wv), atol=1e-10)
    np.testing.assert_allclose(g[1], np.einsum("tbi,tbj->ij", xv, up), atol=1e-10)


def test_dot_keeps_scalars_vectors_and_matrices_as_before():
    s, v, m = T.dscalar("s"), T.dvector("v"), T.dmatrix("m")
    assert isinstance(T.dot(v, m).owner.op, Dot)
    assert isinstance(T.dot(m, m).owner.op, Dot)
    assert T.dot(s, m).owner.op.scalar_op.name == "mul"
    x3 = T.tensor3("x")
    assert T.dot(x3, v).ndim == 2 and T.dot(v, x3).ndim == 2
    assert x3.dot(m).ndim == 3  # the method goes through graphc.tensor.dot too


def test_nd_dot_rejects_static_mismatch():
    a = TensorType("float64", (2, 3, 4))("a")
    b = TensorType("float64", (5, 6))("b")
    with pytest.raises(ValueError, match="differ"):
        T.dot(a, b)
