"""Fused loops round every operation as numpy does: gcc's contraction of ``a*b + c`` into
one fma (its default for GNU C, ``-ffp-contract=fast``) is off (``DEFAULT_CFLAGS``), so a
fused loop equals the unfused graph and numpy bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.linker import c_available

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_multiply_add_is_rounded_twice_as_numpy(dtype):
    x, y, z = (T.vector(s, dtype=dtype) for s in "xyz")
    out = (x * y + z) * x - y
    fused = graphc.function([x, y, z], out, mode=graphc.Mode(linker="c|py"))
    assert any("Composite" in str(n.op) for n in fused.maker.fgraph.toposort())
    rng = np.random.default_rng(11)
    xv, yv, zv = (rng.standard_normal(10_000).astype(dtype) for _ in range(3))
    got = fused(xv, yv, zv)
    want = (xv * yv + zv) * xv - yv
    # with contraction about a third of these differ in the last bit
    np.testing.assert_array_equal(got.view(f"i{got.itemsize}"), want.view(f"i{want.itemsize}"))
