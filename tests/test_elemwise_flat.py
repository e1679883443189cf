"""The element-wise fast path (inputs of one shape, C-contiguous, aligned) computes the
same bits as the general path (broadcasting, strides), and a scan over C steps makes no
Python call per step."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.scalar import basic as ps
from graphc.tensor.elemwise import Elemwise

C_MODE = graphc.Mode(linker="c|py", optimizer=None)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (300,), (512,), (3, 5), (0, 4)])
def test_flat_inputs_give_the_bits_of_the_general_path(dtype, shape):
    """``y`` as a full array (the fast path) or as one broadcast element (the general
    path, whose block buffer runs the same kernel over the same single run)."""
    bcast = (None,) * len(shape)
    x, y = T.tensor(dtype, bcast, name="x"), T.tensor(dtype, bcast, name="y")
    z = (x * y + x) - y if dtype == "int64" else T.exp(x) * y + T.tanh(x) - x * x
    f = graphc.function([x, y], z)
    assert all(i.is_c for i in f.linked.impls)
    xv = (np.random.default_rng(3).standard_normal(shape) * 3).astype(dtype)
    one = np.full((1,) * len(shape), 1.75 if dtype != "int64" else 3, dtype=dtype)
    full = np.broadcast_to(one, shape).copy()
    flat, general = f(xv, full), f(xv, one)
    ref = graphc.function([x, y], z, mode=graphc.Mode(linker="py"))(xv, full)
    assert flat.dtype == general.dtype and flat.shape == general.shape == ref.shape
    np.testing.assert_array_equal(flat, general)
    np.testing.assert_allclose(flat, ref, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_flat_path_on_zero_dimensional_and_mixed_layouts():
    x, y = T.dscalar("x"), T.dscalar("y")
    f = graphc.function([x, y], x * y + 1.0, mode=C_MODE)
    assert f(np.float64(2.0), np.float64(3.0)) == 7.0
    a, b = T.dmatrix("a"), T.dmatrix("b")
    g = graphc.function([a, b], a - b, mode=C_MODE)
    av, bv = np.arange(12.0).reshape(3, 4), np.ones((3, 4))
    np.testing.assert_array_equal(g(av, bv), av - bv)
    np.testing.assert_array_equal(g(av, np.asfortranarray(bv)), av - bv)  # general path
    np.testing.assert_array_equal(g(av, bv[:1].repeat(3, 0)), av - bv)
    swapped = av.astype(av.dtype.newbyteorder())  # same values, not native order
    np.testing.assert_array_equal(g(swapped, bv), av - bv)


def test_flat_path_reuses_the_output_buffer_and_writes_in_place():
    x, y = T.dvector("x"), T.dvector("y")
    op = Elemwise(ps.add, inplace_pattern={0: 0})
    f = graphc.function([graphc.In(x, mutable=True), y], op(x, y), mode=C_MODE)
    xv, yv = np.arange(5.0), np.full(5, 2.0)
    out = f(xv, yv)
    np.testing.assert_array_equal(out, np.arange(5.0) + 2.0)
    g = graphc.function([x, y], x * y, mode=C_MODE.__class__(linker="c|py_nogc", optimizer=None))
    first = g(xv, yv).copy()
    np.testing.assert_array_equal(g(xv, yv), first)


def _python_calls(fn) -> int:
    count = 0

    def prof(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_scan_over_c_steps_makes_no_python_call_per_step():
    # short loops run the general loop, long ones (fastloop.MIN_STEPS and more) the fast
    # one, whose per-call checks make their own calls: each path's count must not grow
    # with the steps
    from graphc.scan_module.fastloop import MIN_STEPS

    X, H = T.dmatrix("X"), T.dvector("H")
    hs, _ = graphc.scan(lambda xt, h: h + xt, sequences=X, outputs_info=H)
    f = graphc.function([X, H], hs)
    h0 = np.zeros(8)
    calls = {}
    short, long = (2, MIN_STEPS - 1), (MIN_STEPS, 10 * MIN_STEPS)
    for n in (*short, *long):
        xv = np.random.default_rng(n).standard_normal((n, 8))
        np.testing.assert_allclose(f(xv, h0), np.cumsum(xv, axis=0), rtol=1e-12)
        calls[n] = _python_calls(lambda xv=xv: f(xv, h0))
    assert calls[short[0]] == calls[short[1]], calls
    assert calls[long[0]] == calls[long[1]], calls
