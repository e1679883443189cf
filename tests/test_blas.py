"""dot / matmul / outer / Dot22 / Gemv / Gemm against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc.tensor as T
from graphc.gradient import verify_grad
from graphc.tensor.basic import shape_tuple
from graphc.tensor.blas import Dot, Dot22, Gemm, Gemv, MatMul, dot22, gemm, gemv
from graphc.tensor.type import TensorType

SETTINGS = settings(max_examples=25, deadline=None)
DTYPES = st.sampled_from(["float16", "float32", "float64", "int32", "int64"])
FLOATS = st.sampled_from(["float32", "float64"])
LAYOUTS = st.sampled_from(["C", "F", "strided"])


def _tol(dtype):
    return {"float16": 1e-2, "float32": 1e-4, "float64": 1e-10}.get(dtype, 0)


def _loose(dtype):
    """The tolerance of a result against a float64 reference (float16 keeps ~3 digits)."""
    return 1e-2 if dtype == "float16" else 1e-4


def _value(rng, shape, dtype, layout):
    if np.dtype(dtype).kind == "f":
        v = rng.standard_normal(shape).astype(dtype)
    else:
        v = rng.integers(-5, 6, size=shape).astype(dtype)
    if layout == "F":
        return np.asfortranarray(v)
    if layout == "strided" and v.ndim:
        big = np.zeros(tuple(2 * s for s in shape), dtype=dtype)
        view = big[tuple(slice(None, None, 2) for _ in shape)]
        view[...] = v
        return view
    return v


def _var(value, name):
    return TensorType(str(value.dtype), [1 if s == 1 else None for s in value.shape])(name)


def _check_infer_shape(out, inputs, values):
    node = out.owner
    shapes = [shape_tuple(i) for i in node.inputs]
    (inferred,) = node.op.infer_shape(None, node, shapes)
    got = tuple(int(np.asarray(s.eval(dict(zip(inputs, values))))) for s in inferred)
    assert got == out.eval(dict(zip(inputs, values))).shape


@SETTINGS
@given(
    kind=st.sampled_from(["vv", "mv", "vm", "mm"]),
    m=st.integers(0, 4), k=st.integers(0, 4), n=st.integers(0, 4),
    da=DTYPES, db=DTYPES, la=LAYOUTS, lb=LAYOUTS, seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_dot_matches_numpy(kind, m, k, n, da, db, la, lb, seed):
    rng = np.random.default_rng(seed)
    sa = {"vv": (k,), "mv": (m, k), "vm": (k,), "mm": (m, k)}[kind]
    sb = {"vv": (k,), "mv": (k,), "vm": (k, n), "mm": (k, n)}[kind]
    a, b = _value(rng, sa, da, la), _value(rng, sb, db, lb)
    a0, b0 = a.copy(), b.copy()
    x, y = _var(a, "a"), _var(b, "b")
    out = T.dot(x, y)
    got = out.eval({x: a, y: b})
    want = np.dot(a, b)
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype == out.dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=_tol(str(want.dtype)), atol=_tol(str(want.dtype)))
    assert not np.shares_memory(got, a) and not np.shares_memory(got, b)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)
    _check_infer_shape(out, [x, y], [a, b])
    if kind == "mm":
        got22 = dot22(x, y).eval({x: a, y: b})
        np.testing.assert_allclose(got22, want, rtol=_tol(str(want.dtype)))


def _batch_shapes(draw):
    nb = draw(st.integers(0, 2))
    base = draw(st.lists(st.integers(0, 3), min_size=nb, max_size=nb))

    def one():
        sh = [1 if draw(st.booleans()) else s for s in base]
        return sh[draw(st.integers(0, nb)) :]

    return one(), one()


def _matmul_shapes(draw, smallest: int) -> tuple[tuple, tuple]:
    """The shapes of two matmul operands, each a vector or a batch of matrices (batch
    dimensions that broadcast), with m, k, n from ``smallest`` to 3."""
    ba, bb = _batch_shapes(draw)
    m, k, n = (draw(st.integers(smallest, 3)) for _ in range(3))
    va, vb = draw(st.booleans()), draw(st.booleans())  # 1-d operands
    return ((k,) if va else (*ba, m, k)), ((k,) if vb else (*bb, k, n))


@SETTINGS
@given(data=st.data(), dtype=DTYPES, seed=st.integers(0, 2**32 - 1))
def test_matmul_matches_numpy(data, dtype, seed):
    rng = np.random.default_rng(seed)
    sa, sb = _matmul_shapes(data.draw, 0)
    a = _value(rng, sa, dtype, data.draw(LAYOUTS))
    b = _value(rng, sb, dtype, data.draw(LAYOUTS))
    x, y = _var(a, "a"), _var(b, "b")
    out = T.matmul(x, y)
    got = out.eval({x: a, y: b})
    want = np.matmul(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert out.ndim == want.ndim
    np.testing.assert_allclose(got, want, rtol=_tol(dtype), atol=_tol(dtype))
    for static, actual in zip(out.type.shape, want.shape):
        assert static is None or static == actual
    _check_infer_shape(out, [x, y], [a, b])
    assert (x @ y).owner.op == MatMul()


@SETTINGS
@given(data=st.data(), dtype=FLOATS, seed=st.integers(0, 2**32 - 1))
def test_matmul_grad(data, dtype, seed):
    rng = np.random.default_rng(seed)
    sa, sb = _matmul_shapes(data.draw, 1)
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    verify_grad(T.matmul, [a, b], n_tests=1, rng=rng)


@SETTINGS
@given(
    kind=st.sampled_from(["vv", "mv", "vm", "mm"]),
    m=st.integers(0, 3), k=st.integers(0, 3), n=st.integers(0, 3), dtype=FLOATS,
    seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_dot_grad(kind, m, k, n, dtype, seed):
    rng = np.random.default_rng(seed)
    sa = {"vv": (k,), "mv": (m, k), "vm": (k,), "mm": (m, k)}[kind]
    sb = {"vv": (k,), "mv": (k,), "vm": (k, n), "mm": (k, n)}[kind]
    pts = [rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)]
    verify_grad(T.dot, pts, n_tests=1, rng=rng)
    if kind == "mm":
        verify_grad(dot22, pts, n_tests=1, rng=rng)
    if kind == "vv":
        verify_grad(T.outer, pts, n_tests=1, rng=rng)


@SETTINGS
@given(
    m=st.integers(0, 4), k=st.integers(0, 4), n=st.integers(0, 4), dtype=DTYPES,
    alpha=st.sampled_from([0.0, 1.0, -2.5]), beta=st.sampled_from([0.0, 1.0, 0.5]),
    inplace=st.booleans(), lz=st.sampled_from(["C", "F"]), lx=LAYOUTS, ly=LAYOUTS,
    seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_gemm(m, k, n, dtype, alpha, beta, inplace, lz, lx, ly, seed):
    rng = np.random.default_rng(seed)
    Z = _value(rng, (m, n), dtype, lz)
    X, Y = _value(rng, (m, k), dtype, lx), _value(rng, (k, n), dtype, ly)
    if np.dtype(dtype).kind != "f":
        alpha, beta = int(alpha), int(beta)
    z, x, y = _var(Z, "z"), _var(X, "x"), _var(Y, "y")
    out = Gemm(inplace)(z, alpha, x, y, beta)
    want = beta * Z.astype("float64") + alpha * (X.astype("float64") @ Y.astype("float64"))
    Zin = Z.copy(order="K")
    got = out.eval({z: Zin, x: X, y: Y})
    assert got.dtype == Z.dtype and got.shape == (m, n)
    np.testing.assert_allclose(got, want, rtol=_loose(dtype), atol=_loose(dtype))
    if inplace:
        assert np.shares_memory(got, Zin) or got.size == 0
        np.testing.assert_allclose(Zin, want, rtol=_loose(dtype), atol=_loose(dtype))
    else:
        np.testing.assert_array_equal(Zin, Z)
        assert not np.shares_memory(got, Zin) or got.size == 0
    _check_infer_shape(out, [z, x, y], [Z, X, Y])
    assert out.owner.op.destroy_map == ({0: [0]} if inplace else {})


@SETTINGS
@given(
    m=st.integers(0, 4), n=st.integers(0, 4), dtype=DTYPES,
    alpha=st.sampled_from([0.0, 1.0, -2.5]), beta=st.sampled_from([0.0, 1.0, 0.5]),
    inplace=st.booleans(), la=LAYOUTS, lx=LAYOUTS, seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_gemv(m, n, dtype, alpha, beta, inplace, la, lx, seed):
    rng = np.random.default_rng(seed)
    yv = _value(rng, (m,), dtype, "C")
    A, xv = _value(rng, (m, n), dtype, la), _value(rng, (n,), dtype, lx)
    if np.dtype(dtype).kind != "f":
        alpha, beta = int(alpha), int(beta)
    y, a, x = _var(yv, "y"), _var(A, "A"), _var(xv, "x")
    out = Gemv(inplace)(y, alpha, a, x, beta)
    want = beta * yv.astype("float64") + alpha * (A.astype("float64") @ xv.astype("float64"))
    yin = yv.copy()
    got = out.eval({y: yin, a: A, x: xv})
    assert got.dtype == yv.dtype and got.shape == (m,)
    np.testing.assert_allclose(got, want, rtol=_loose(dtype), atol=_loose(dtype))
    if inplace:
        assert np.shares_memory(got, yin) or m == 0
        np.testing.assert_allclose(yin, want, rtol=_loose(dtype), atol=_loose(dtype))
    else:
        np.testing.assert_array_equal(yin, yv)
    _check_infer_shape(out, [y, a, x], [yv, A, xv])


def test_gemm_beta_zero_ignores_z():
    z, x, y = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
    Z = np.full((2, 2), np.nan)
    X, Y = np.eye(2), np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(gemm(z, 1.0, x, y, 0.0).eval({z: Z, x: X, y: Y}), Y)
    yv, v = T.dvector("yv"), T.dvector("v")
    got = gemv(yv, 2.0, x, v, 0.0).eval({yv: np.full(2, np.nan), x: X, v: np.ones(2)})
    np.testing.assert_array_equal(got, [2.0, 2.0])


def test_gemm_gemv_grads():
    rng = np.random.default_rng(3)
    verify_grad(gemm, [rng.random((3, 2)), 1.5, rng.random((3, 4)), rng.random((4, 2)), 0.7])
    verify_grad(gemv, [rng.random(3), -0.5, rng.random((3, 4)), rng.random(4), 2.0])


def test_build_time_errors_name_operation_and_types():
    m = T.dmatrix("m")
    with pytest.raises(
        NotImplementedError, match=r"dot of Tensor\(float64, shape=\(\?, \?, \?\)\)"
    ):
        Dot()(T.tensor3("t"), m)  # the Op; graphc.tensor.dot goes through tensordot
    a = TensorType("float64", (2, 3))("a")
    b = TensorType("float64", (4, 2))("b")
    with pytest.raises(ValueError, match=r"dot.*3 vs 4"):
        T.dot(a, b)
    with pytest.raises(ValueError, match="MatMul"):
        T.matmul(a, b)
    with pytest.raises(TypeError, match=r"Gemm.*float32"):
        gemm(m, 1.0, T.fmatrix("f"), m, 1.0)
    with pytest.raises(TypeError, match="Gemv"):
        gemv(T.dvector(), 1.0, m, m, 1.0)
    with pytest.raises(TypeError, match="Dot22"):
        dot22(m, T.dvector())
    with pytest.raises(TypeError, match="outer"):
        T.outer(m, m)


def test_static_shapes_and_dtypes():
    a = TensorType("float32", (2, None))("a")
    b = TensorType("float64", (None, 5))("b")
    assert T.dot(a, b).type == TensorType("float64", (2, 5))
    assert T.dot(T.ivector(), T.ivector()).type == TensorType("int32", ())
    assert T.matmul(TensorType("float64", (1, 3, 2, 4))(), TensorType("float64", (7, 1, 4, 5))())\
        .type.shape == (7, 3, 2, 5)  # fmt: skip
    assert T.dot(T.dscalar(), T.dvector()).owner.op != Dot()  # scalars multiply


def test_flops_and_str():
    m, v = T.dmatrix(), T.dvector()
    d = T.dot(m, m).owner
    assert d.op.flops(d, [(3, 4), (4, 5)], [(3, 5)]) == 2 * 3 * 4 * 5
    mv = T.dot(m, v).owner
    assert mv.op.flops(mv, [(3, 4), (4,)], [(3,)]) == 2 * 3 * 4
    g = gemm(m, 1.0, m, m, 1.0).owner
    assert g.op.flops(g, [(3, 5), (), (3, 4), (4, 5), ()], [(3, 5)]) == 2 * 3 * 4 * 5
    gv = gemv(v, 1.0, m, v, 1.0).owner
    assert gv.op.flops(gv, [(3,), (), (3, 4), (4,), ()], [(3,)]) == 2 * 3 * 4
    mm = T.matmul(T.tensor3(), m).owner
    assert mm.op.flops(mm, [(2, 3, 4), (4, 5)], [(2, 3, 5)]) == 2 * 2 * 3 * 4 * 5
    assert str(Dot()) == "dot" and str(Dot22()) == "Dot22"
    assert str(Gemm(True)) == "Gemm{inplace}" and str(Gemv(False)) == "Gemv{no_inplace}"
    assert Gemm(True) == Gemm(True) and Gemm(True) != Gemm(False)


def test_exports():
    import graphc.tensor.blas as blas

    for name in ("dot", "matmul", "outer", "Dot", "Dot22", "Gemv", "Gemm", "MatMul", "dot22",
                 "gemv", "gemm"):  # fmt: skip
        assert name in blas.__all__ and getattr(T, name) is getattr(blas, name)
