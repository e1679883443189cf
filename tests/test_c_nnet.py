"""C (log-)softmax and 1-hot cross-entropy thunks against the Python implementations."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from array_layouts import layout
from c_twins import CAndPy, assert_all_c, twins_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphc.linker import c_available
from graphc.tensor import nnet
from graphc.tensor.type import TensorType

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")

DTYPES = ("float32", "float64")
LAYOUTS = ("C", "F", "strided", "reversed")
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-14)}


class Funcs(CAndPy):
    def __init__(self, dt):
        x2 = TensorType(dt, (None, None))()
        x3 = TensorType(dt, (None, None, None))()
        g = TensorType(dt, (None,))()
        idx = TensorType("int32", (None,))()
        nll, sm = nnet.crossentropy_softmax_1hot(x2, idx)
        inputs = [x2, x3, g, idx]
        outputs = [
            nnet.softmax(x2),
            nnet.log_softmax(x2),
            nnet.softmax(x2, axis=0),
            nnet.log_softmax(x3, axis=1),
            nnet.softmax(x3, axis=0),
            nll,
            sm,
            nnet.CrossentropySoftmax1HotDx()(g, sm, idx),
        ]
        super().__init__(inputs, outputs)


funcs = twins_fixture(Funcs, DTYPES)


def test_nodes_report_c(funcs):
    assert_all_c(funcs)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dt=st.sampled_from(DTYPES),
    rows=st.integers(0, 5),
    cols=st.integers(1, 7),
    depth=st.integers(0, 4),
    lay=st.lists(st.sampled_from(LAYOUTS), min_size=3, max_size=3),
    scale=st.sampled_from([1.0, 30.0, 1000.0]),
    seed=st.integers(0, 2**31 - 1),
)
def test_matches_python(funcs, dt, rows, cols, depth, lay, scale, seed):
    rng = np.random.default_rng(seed)
    x2 = layout((scale * rng.standard_normal((rows, cols))).astype(dt), lay[0])
    x3 = layout(rng.standard_normal((rows, depth, cols)).astype(dt), lay[1])
    g = layout(rng.standard_normal(rows).astype(dt), lay[2])
    idx = rng.integers(0, cols, rows).astype("int32")
    args = [x2, x3, g, idx]
    before = [a.copy() for a in args]
    f = funcs[dt]
    got, want = f.c(*args), f.py(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)
    for k, (c, w) in enumerate(zip(got, want)):
        assert c.dtype == w.dtype and c.shape == w.shape, k
        np.testing.assert_allclose(c, w, err_msg=f"output {k}", **TOL[dt])


def test_extreme_values_match_python(funcs):
    f = funcs["float64"]
    x2 = np.array([[np.inf, 0.0, 1.0], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 2.0],
                   [1e300, -1e300, 0.0]])  # fmt: skip
    x3 = np.zeros((4, 2, 3))
    args = [x2, x3, np.ones(4), np.array([1, 2, 0, 1], "int32")]
    with np.errstate(all="ignore"):
        want = f.py(*args)
    got = f.c(*args)
    for c, w in zip(got, want):
        np.testing.assert_allclose(c, w, equal_nan=True)


def test_softmax_rows_sum_to_one(funcs):
    f = funcs["float32"]
    x2 = np.random.default_rng(3).standard_normal((50, 300)).astype("float32") * 20
    sm = f.c(x2, np.zeros((50, 0, 300), "float32"), np.zeros(50, "float32"),
             np.zeros(50, "int32"))[0]  # fmt: skip
    np.testing.assert_allclose(sm.sum(axis=1), 1, rtol=1e-5)


def test_bad_class_indices_raise(funcs):
    f = funcs["float64"]
    x2 = np.zeros((2, 3))
    args = [x2, np.zeros((2, 1, 3)), np.ones(2)]
    with pytest.raises(IndexError, match="out of range"):
        f.c(*args, np.array([0, 3], "int32"))
    with pytest.raises(IndexError, match="out of range"):
        f.c(*args, np.array([-1, 0], "int32"))
    with pytest.raises(ValueError, match="class indices"):
        f.c(*args, np.array([0, 1, 2], "int32"))


def test_no_reference_leaks(funcs):
    f = funcs["float64"]
    rng = np.random.default_rng(4)
    args = [layout(rng.standard_normal((3, 4)), "F"), rng.standard_normal((3, 2, 4)),
            rng.standard_normal(3), np.array([0, 3, 1], "int32")]  # fmt: skip
    f.c(*args)
    before = [sys.getrefcount(a) for a in args]
    for _ in range(10_000):
        outs = f.c(*args)
    assert [sys.getrefcount(a) for a in args] == before
    f.c(*args)  # a returned value is kept for reuse until the next call, no longer
    assert all(sys.getrefcount(o) == 3 for o in outs)
