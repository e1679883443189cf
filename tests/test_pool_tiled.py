"""The C's path for max pooling over windows that tile the input (no padding, stride =
window): the pooling and its gradient against the direct-loop reference and the numpy
implementation, with leftover rows and columns, ties and NaN."""

from __future__ import annotations

import numpy as np
import pytest
from test_pool import ref_pool, ref_pool_grad

import graphc
import graphc.tensor as T
from graphc.tensor.signal import pool

C_MODE = graphc.Mode(linker="c|py", optimizer="fast_run")
PY_MODE = graphc.Mode(linker="py", optimizer=None)


def _pool_and_grad(dtype, ws, ignore_border, mode):
    x, g = T.tensor4("x", dtype=dtype), T.tensor4("g", dtype=dtype)
    y = pool.pool_2d(x, ws, ignore_border=ignore_border)
    return graphc.function([x, g], [y, graphc.grad((y * g).sum(), x)], mode=mode)


# (input shape, window, ignore_border): whole tilings, leftover rows or columns (ignored
# borders), windows of 1, 2x2 and other sizes
CASES = [
    ((2, 3, 8, 6), (2, 2), True),
    ((2, 3, 8, 6), (2, 2), False),
    ((1, 2, 7, 9), (2, 2), True),
    ((3, 1, 9, 8), (3, 2), True),
    ((2, 2, 6, 6), (1, 3), False),
    ((1, 1, 5, 5), (1, 1), True),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_tiled_max_pooling_and_gradient_match_direct_loops(case, dtype):
    shape, ws, ignore_border = case
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    # distinct values, so that every window has one maximum
    xv = (rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1 - 1.0).astype(dtype)
    want = ref_pool(xv, ws, ws, (0, 0), ignore_border, "max")
    gv = rng.standard_normal(want.shape).astype(dtype)
    got, gx = _pool_and_grad(dtype, ws, ignore_border, C_MODE)(xv, gv)
    assert got.dtype == gx.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)
    want_gx = ref_pool_grad(xv, gv, ws, ws, (0, 0), ignore_border, "max")
    np.testing.assert_allclose(gx, want_gx, rtol=1e-6, atol=0)


@pytest.mark.parametrize("ws", [(2, 2), (2, 3)])
def test_ties_and_nan_follow_the_numpy_implementation(ws):
    """A tie sends the gradient to every maximum (as Theano does); a NaN in a window is
    its maximum and gets no gradient."""
    xv = np.zeros((1, 2, 4, 6))
    xv[0, 0, 0, :3] = [1.0, 1.0, 0.5]
    xv[0, 1, 1, 1] = np.nan
    xv[0, 1, 2:, 3:] = [[-np.inf, 2.0, 2.0], [2.0, -1.0, np.nan]]
    gv = np.arange(1.0, 1.0 + 2 * 2 * (6 // ws[1])).reshape(1, 2, 2, 6 // ws[1])
    got = _pool_and_grad("float64", ws, True, C_MODE)(xv, gv)
    want = _pool_and_grad("float64", ws, True, PY_MODE)(xv, gv)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert np.isnan(got[0][0, 1, 0, 0])
