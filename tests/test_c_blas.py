"""C BLAS thunks (Dot, Dot22, Gemv, Gemm) against the Python implementations."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from array_layouts import layout
from c_twins import PY, C, CAndPy, assert_all_c, twins_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc.graph.fg import FunctionGraph
from graphc.linker import c_available
from graphc.linker.clinker import link_cpy
from graphc.tensor import blas
from graphc.tensor.type import TensorType
from graphc.vm import make_vm

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")

DTYPES = ("float32", "float64")
LAYOUTS = ("C", "F", "strided", "transposed", "reversed")
TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def mat(dt):
    return TensorType(dt, (None, None))()


def vec(dt):
    return TensorType(dt, (None,))()


class Funcs(CAndPy):
    """One compiled C function and its Python twin per dtype (few modules in all)."""

    def __init__(self, dt):
        Z, X, Y, A = mat(dt), mat(dt), mat(dt), mat(dt)  # noqa: N806
        y, x, u = vec(dt), vec(dt), vec(dt)
        alpha, beta = TensorType(dt, ())(), TensorType("float64", ())()
        inputs = [Z, alpha, X, Y, beta, y, A, x, u]
        outputs = [
            blas.gemm(Z, alpha, X, Y, beta),
            blas.gemv(y, alpha, A, x, beta),
            blas.dot22(X, Y),
            blas.dot(A, x),
            blas.dot(y, A),
            blas.dot(x, u),
            blas.dot(X, Y),
        ]
        super().__init__(inputs, outputs)


funcs = twins_fixture(Funcs, DTYPES)


def test_nodes_report_c(funcs):
    assert_all_c(funcs)


def test_other_dtypes_fall_back_to_python():
    X, Y = TensorType("int64", (None, None))(), TensorType("int64", (None, None))()  # noqa: N806
    f = graphc.function([X, Y], blas.dot(X, Y), mode=C)
    assert not any(impl.is_c for impl in f.linked.impls)
    a = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(f(a, a.T), a @ a.T)


dims = st.integers(0, 6)
sizes = dict(dt=st.sampled_from(DTYPES), m=dims, k=dims, n=dims)  # a dtype and m x k x n


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    **sizes,
    lay=st.lists(st.sampled_from(LAYOUTS), min_size=9, max_size=9),
    alpha=st.sampled_from([1.0, -0.5, 2.0, 0.0]),
    beta=st.sampled_from([0.0, 1.0, 0.25]),
    seed=st.integers(0, 2**31 - 1),
)
def test_products_match_python(funcs, dt, m, k, n, lay, alpha, beta, seed):
    rng = np.random.default_rng(seed)

    def arr(*shape):
        return rng.standard_normal(shape).astype(dt)

    shapes = [(m, n), None, (m, k), (k, n), None, (m,), (m, k), (k,), (k,)]
    args = []
    for shape, kind in zip(shapes, lay):
        args.append(None if shape is None else layout(arr(*shape), kind))
    args[1] = np.asarray(alpha, dtype=dt)
    args[4] = np.asarray(beta)
    before = [a.copy() for a in args]
    f = funcs[dt]
    got = f.c(*args)
    want = f.py(*args)
    for a, b in zip(args, before):  # inputs are never modified
        np.testing.assert_array_equal(a, b)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, **TOL[dt])


def test_beta_zero_does_not_read_the_output(funcs):
    for dt, f in funcs.items():
        rng = np.random.default_rng(0)
        z, y = np.full((4, 3), np.nan, dt), np.full(4, np.nan, dt)
        X, Y = rng.standard_normal((4, 5)).astype(dt), rng.standard_normal((5, 3)).astype(dt)  # noqa: N806
        A, x = rng.standard_normal((4, 5)).astype(dt), rng.standard_normal(5).astype(dt)  # noqa: N806
        out = f.c(z, np.asarray(1, dt), X, Y, np.asarray(0.0), y, A, x, x)
        np.testing.assert_allclose(out[0], X @ Y, **TOL[dt])
        np.testing.assert_allclose(out[1], A @ x, **TOL[dt])
        e = np.empty((4, 0), dt)  # an empty inner dimension: the result is beta * Z
        out = f.c(z, np.asarray(1, dt), e, np.empty((0, 3), dt), np.asarray(0.0), y, e, e[0], e[0])
        np.testing.assert_array_equal(out[0], np.zeros((4, 3), dt))
        np.testing.assert_array_equal(out[1], np.zeros(4, dt))


def test_shape_mismatch_raises(funcs):
    f = funcs["float64"]
    z = np.zeros((2, 3))
    with pytest.raises(ValueError, match="shape mismatch"):
        f.c(z, 1.0, np.zeros((2, 4)), np.zeros((5, 3)), 1.0, np.zeros(2), np.zeros((2, 2)),
            np.zeros(2), np.zeros(2))  # fmt: skip
    with pytest.raises(ValueError):
        f.c(z, 1.0, np.zeros((2, 4)), np.zeros((4, 3)), 1.0, np.zeros(3), np.zeros((2, 2)),
            np.zeros(2), np.zeros(2))  # fmt: skip


class Linked:
    """A C-linked program run straight by the VM (no input copies, so inputs can be destroyed)."""

    def __init__(self, inputs, outputs):
        fg = FunctionGraph(inputs, outputs, clone=False)
        self.linked = link_cpy(fg, fg.outputs)
        self.vm = make_vm(self.linked.program)

    def __call__(self, *args):
        return self.vm(list(args))


@pytest.fixture(scope="module")
def inplace_funcs():
    out = {}
    for dt in DTYPES:
        Z, X, Y, A = mat(dt), mat(dt), mat(dt), mat(dt)  # noqa: N806
        y, x = vec(dt), vec(dt)
        a, b = TensorType(dt, ())(), TensorType(dt, ())()
        ins = [Z, a, X, Y, b, y, A, x]
        outs = [blas.Gemm(inplace=True)(Z, a, X, Y, b), blas.Gemv(inplace=True)(y, a, A, x, b)]
        out[dt] = Linked(ins, outs)
    return out


@settings(max_examples=60, deadline=None)
@given(
    **sizes,
    lay=st.lists(st.sampled_from(LAYOUTS), min_size=5, max_size=5),
    beta=st.sampled_from([0.0, 1.0, -2.0]),
)
def test_inplace_writes_into_the_destroyed_input(inplace_funcs, dt, m, k, n, lay, beta):
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    f = inplace_funcs[dt]
    assert all(impl.is_c for impl in f.linked.impls)
    z = layout(rng.standard_normal((m, n)).astype(dt), lay[0])
    X = layout(rng.standard_normal((m, k)).astype(dt), lay[1])  # noqa: N806
    Y = layout(rng.standard_normal((k, n)).astype(dt), lay[2])  # noqa: N806
    y = layout(rng.standard_normal(m).astype(dt), lay[3])
    x = layout(rng.standard_normal(k).astype(dt), lay[4])
    A = X  # noqa: N806
    z0, y0, X0 = z.copy(), y.copy(), X.copy()  # noqa: N806
    alpha = np.asarray(1.5, dt)
    gz, gy = f(z, alpha, X, Y, np.asarray(beta, dt), y, A, x)
    assert gz is z and gy is y
    np.testing.assert_allclose(gz, beta * z0 + 1.5 * (X0 @ Y), **TOL[dt])
    np.testing.assert_allclose(gy, beta * y0 + 1.5 * (X0 @ x), **TOL[dt])
    np.testing.assert_array_equal(X, X0)


def test_inplace_result_is_the_input(inplace_funcs):
    f = inplace_funcs["float64"]
    z, y = np.ones((3, 2)), np.ones(3)
    node_out = f.linked.program.nodes[0]
    assert node_out.destroys == (0,)
    one = np.asarray(1.0)
    f(z, one, np.ones((3, 4)), np.ones((4, 2)), one, y, np.ones((3, 4)), np.ones(4))
    np.testing.assert_array_equal(z, np.full((3, 2), 5.0))
    np.testing.assert_array_equal(y, np.full(3, 5.0))
    rng = np.random.default_rng(7)
    z, w = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    z0 = z.copy()  # the destroyed Z is also the X operand (BLAS would read it half-written)
    f(z, one, z, w, np.asarray(2.0), np.ones(64), np.ones((64, 4)), np.ones(4))
    np.testing.assert_allclose(z, 2 * z0 + z0 @ w)
    z, y, e, zero = np.full((3, 2), np.nan), np.full(3, np.nan), np.empty((3, 0)), np.asarray(0.0)
    f(z, one, e, np.empty((0, 2)), zero, y, e, np.empty(0))  # beta == 0: NaN never read
    np.testing.assert_array_equal(z, np.zeros((3, 2)))
    np.testing.assert_array_equal(y, np.zeros(3))


def test_output_buffers_reused_without_gc():
    dt = "float64"
    X, Y, Z = mat(dt), mat(dt), mat(dt)  # noqa: N806
    a = TensorType(dt, ())()
    inner = blas.dot22(X, Y)
    out = blas.gemm(Z, a, inner, Y.T, 0.0)  # the dot22 result is an intermediate
    f = graphc.function([X, Y, Z, a], out, mode=graphc.Mode(linker="c|py_nogc", optimizer=None))
    g = graphc.function([X, Y, Z, a], out, mode=PY)
    rng = np.random.default_rng(1)
    for shape in [(3, 4), (3, 4), (2, 5), (3, 4)]:
        args = [rng.standard_normal(shape), rng.standard_normal((shape[1], shape[1])),
                np.full((shape[0], shape[1]), np.nan), np.asarray(2.0)]  # fmt: skip
        np.testing.assert_allclose(f(*args), g(*args), rtol=1e-12)


def test_no_reference_leaks(funcs):
    f = funcs["float64"]
    rng = np.random.default_rng(2)
    args = [
        rng.standard_normal((3, 4)), np.asarray(1.0), layout(rng.standard_normal((3, 2)), "F"),
        layout(rng.standard_normal((2, 4)), "strided"), np.asarray(0.5), rng.standard_normal(3),
        layout(rng.standard_normal((3, 2)), "transposed"), rng.standard_normal(2),
        rng.standard_normal(2),
    ]  # fmt: skip
    f.c(*args)
    before = [sys.getrefcount(a) for a in args]
    for _ in range(10_000):
        outs = f.c(*args)
    assert [sys.getrefcount(a) for a in args] == before
    f.c(*args)  # a returned value is kept for reuse until the next call, no longer
    assert all(sys.getrefcount(o) == 3 for o in outs)  # the list, the loop variable, the call


def test_large_product_matches(funcs):
    """Big enough that the thunk lets other threads run during the BLAS call."""
    f = funcs["float64"]
    rng = np.random.default_rng(8)
    X, Y = rng.standard_normal((128, 100)), rng.standard_normal((100, 120))  # noqa: N806
    z, one = rng.standard_normal((128, 120)), np.asarray(1.0)
    v = np.zeros(3)
    out = f.c(z, one, X, Y, one, v, np.zeros((3, 2)), np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(out[0], z + X @ Y, rtol=1e-10)
    np.testing.assert_allclose(out[2], X @ Y, rtol=1e-10)


def test_coefficients_of_every_numeric_dtype_are_read_exactly():
    """alpha and beta of any bool, integer or float dtype become the right double."""
    Z, X, Y = mat("float64"), mat("float64"), mat("float64")  # noqa: N806
    values = {"bool": True, "int8": -3, "int16": -300, "int32": -70000, "int64": -(2**40),
              "uint8": 200, "uint16": 60000, "uint32": 2**31 + 5, "uint64": 2**63 + 2048,
              "float32": 0.375, "float64": -1.25}  # fmt: skip
    dts = list(values)
    coefs = {dt: TensorType(dt, ())() for dt in dts}
    outs = [blas.gemm(Z, coefs[a], X, Y, coefs[b]) for a, b in zip(dts, dts[1:] + dts[:1])]
    f = graphc.function([Z, X, Y, *coefs.values()], outs, mode=C)
    assert all(i.is_c for i in f.linked.impls)
    z, x, y = np.ones((2, 3)), np.arange(6.0).reshape(2, 3) / 4, np.eye(3)
    got = f(z, x, y, *(np.asarray(values[dt], dt) for dt in dts))
    for out, a, b in zip(got, dts, dts[1:] + dts[:1]):
        want = float(np.asarray(values[b], b)) * z + float(np.asarray(values[a], a)) * (x @ y)
        np.testing.assert_array_equal(out, want, err_msg=f"alpha {a}, beta {b}")
