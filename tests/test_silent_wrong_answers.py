"""Results that were once wrong without any error, each checked against numpy under every
linker: in-place BLAS under aliasing, small-int transcendental dtypes, prod's gradient with
zeros, integer means, mismatched dot, inputs that do not fit their dtype, ndarray subclasses."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.tensor.blas import Gemm, Gemv

MODES = {
    "py": graphc.Mode(linker="py", optimizer="fast_run"),
    "c|py": graphc.Mode(linker="c|py", optimizer="fast_run"),
    "FAST_COMPILE": "FAST_COMPILE",
}


def _run_perform(op, *values):
    node = op.make_node(*[T.as_tensor_variable(v) for v in values])
    cells = [[None] for _ in node.outputs]
    op.perform(node, list(values), cells)
    return cells[0][0]


@pytest.mark.parametrize("order", ["C", "F"])
def test_inplace_gemm_perform_reads_its_operands_before_overwriting(order):
    z = np.asarray(np.arange(9.0).reshape(3, 3) / 7, order=order)
    want = z + z @ z
    got = _run_perform(Gemm(inplace=True), z, 1.0, z, z, 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got is z or np.shares_memory(got, z)


def test_inplace_gemv_perform_reads_its_operands_before_overwriting():
    a = np.arange(9.0).reshape(3, 3)
    y = a[0]  # y views A's first row
    want = 2 * y + 3 * (a @ a[:, 1])
    got = _run_perform(Gemv(inplace=True), y, 3.0, a, a[:, 1], 2.0)
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_gemm_rewrite_on_an_intermediate_that_feeds_itself(mode):
    x = T.dmatrix("x")
    z = T.exp(x) - 1.0
    f = graphc.function([x], z + T.dot(z, z), mode=MODES[mode])
    xv = np.random.default_rng(0).normal(size=(4, 4)) / 4
    zv = np.exp(xv) - 1
    np.testing.assert_allclose(f(xv), zv + zv @ zv, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16"])
def test_float_functions_of_small_ints_compute_in_the_declared_dtype(mode, dtype):
    b = T.vector("b", dtype=dtype)
    outs = [T.exp(b), T.cosh(b), T.expm1(b), T.sqrt(b), T.log1p(b)]
    f = graphc.function([b], outs, mode=MODES[mode])
    v = np.array([0, 1, 12, 20], dtype=dtype) if dtype != "bool" else np.array([0, 1], bool)
    for out, got, fn in zip(outs, f(v), [np.exp, np.cosh, np.expm1, np.sqrt, np.log1p]):
        assert got.dtype == out.dtype == "float32"
        want = fn(v.astype("float64")).astype("float32")  # the math in float32, as declared
        np.testing.assert_allclose(got, want, rtol=2e-6)
        assert np.all(np.isfinite(got))


@pytest.mark.parametrize("mode", MODES)
def test_prod_gradient_is_the_product_of_the_others_where_x_has_zeros(mode):
    x = T.dmatrix("x")
    g = graphc.function([x], graphc.grad(T.prod(x, axis=1).sum(), x), mode=MODES[mode])
    xv = np.array([[0.0, 2, 3], [1, 0, 0], [2, 3, 4], [0, 0, 0], [-1, 5, 0.5]])
    want = np.array([[np.prod(np.delete(r, j)) for j in range(3)] for r in xv])
    np.testing.assert_array_equal(g(xv), want)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.5, -2.0, 0.5, 3.0]), min_size=1, max_size=5))
def test_prod_gradient_matches_the_definition(values):
    x = T.dvector("x")
    g = graphc.function([x], graphc.grad(T.prod(x), x))
    xv = np.array(values)
    want = [np.prod(np.delete(xv, j)) for j in range(len(xv))]
    np.testing.assert_allclose(g(xv), want, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int64", "uint64", "int32"])
def test_integer_mean_var_std_accumulate_in_float64(mode, dtype):
    big = np.iinfo(dtype).max // 2 + 1
    v = np.array([[big, big, big - 7], [big, 3, big]], dtype=dtype)
    x = T.matrix("x", dtype=dtype)
    f = graphc.function([x], [x.mean(), x.mean(axis=0), x.var(axis=1), x.std()], mode=MODES[mode])
    got = f(v)
    for g, w in zip(got, [v.mean(), v.mean(axis=0), v.var(axis=1), v.std()]):
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sa, sb", [((2, 3), (4,)), ((3,), (4, 2)), ((2, 3), (4, 5)), ((3,), (4,))])
def test_dot_with_mismatched_inner_dimensions_raises(mode, sa, sb):
    a = T.tensor("float64", shape=(None,) * len(sa))
    b = T.tensor("float64", shape=(None,) * len(sb))
    f = graphc.function([a, b], T.dot(a, b), mode=MODES[mode])
    with pytest.raises(ValueError, match="align|match|shape"):
        f(np.ones(sa), np.ones(sb))


@pytest.mark.parametrize("value", [1e300, -1e300, 1e-50, 5.3068e-42, 2**24 + 1, 2**53 + 1])
def test_python_numbers_that_do_not_fit_float32_are_refused(value):
    x = T.fscalar("x")
    f = graphc.function([x], x * 2)
    with pytest.raises(TypeError, match="does not fit float32"):
        f(value)
    g = graphc.function([x], x * 2, allow_input_downcast=True)
    assert g(value) == np.float32(value) * 2


def test_python_numbers_that_fit_float32_are_accepted_rounded():
    x = T.fscalar("x")
    f = graphc.function([x], x * 1)
    assert f(0.1) == np.float32(0.1)
    assert f(1.5e-38) == np.float32(1.5e-38)  # the smallest normal range keeps its digits
    assert np.isnan(f(float("nan"))) and f(float("inf")) == np.inf


def test_lists_that_do_not_fit_float32_are_refused():
    v = T.fvector("v")
    f = graphc.function([v], v * 1)
    np.testing.assert_array_equal(f([0.1, 2.0]), np.float32([0.1, 2.0]))
    for bad in ([1e300], [1.0, 1e-50], [2**24 + 1]):
        with pytest.raises(TypeError):
            f(bad)


@pytest.mark.parametrize("mode", MODES)
def test_ndarray_subclasses_become_plain_arrays(mode):
    m = T.dmatrix("m")
    f = graphc.function([m], [m.sum(axis=1), m * 2], mode=MODES[mode])
    s, d = f(np.matrix([[1.0, 2], [3, 4]]))
    assert type(s) is np.ndarray and s.shape == (2,)
    np.testing.assert_array_equal(s, [3.0, 7.0])
    assert type(d) is np.ndarray


@pytest.mark.parametrize("mode", MODES)
def test_masked_arrays_are_refused_not_silently_unmasked(mode):
    m = T.dmatrix("m")
    f = graphc.function([m], m.sum(), mode=MODES[mode])
    with pytest.raises(TypeError, match="masked"):
        f(np.ma.array([[1.0, 2], [3, 4]], mask=[[0, 1], [0, 0]]))


def test_shared_values_are_plain_arrays_too():
    w = graphc.shared(np.zeros((2, 2)))
    w.set_value(np.matrix([[1.0, 2], [3, 4]]))
    assert type(w.get_value()) is np.ndarray
    with pytest.raises(TypeError, match="masked"):
        w.set_value(np.ma.array(np.ones((2, 2))))
