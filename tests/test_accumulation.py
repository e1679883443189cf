"""Sums and products of float32 accumulate in float64 in every code path (Theano's
``acc_dtype`` rules), checked against numpy in float64; and the dtype rules of
``sum(x, dtype=None, acc_dtype=None)`` as Theano documents them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.compile.mode import Mode
from graphc.linker import c_available
from graphc.tensor.math import CAReduce, ElemwiseSums

MODES = {
    "py": Mode(linker="py", optimizer="None"),
    "FAST_COMPILE": "FAST_COMPILE",
    "FAST_RUN": "FAST_RUN",
}
if c_available():
    MODES["c|py"] = Mode(linker="c|py", optimizer="None")

N = 10**7


def _rel(got, want) -> float:
    got, want = np.asarray(got, dtype="float64"), np.asarray(want, dtype="float64")
    return float(np.max(np.abs(got - want) / np.abs(want)))


@pytest.mark.parametrize("mode", list(MODES))
def test_float32_sum_of_ten_million_is_accurate(mode):
    # a float32 accumulator is off by ~0.15% here; float64 by ~1e-8
    x = T.vector("x", dtype="float32")
    xv = np.full(N, 0.1, dtype="float32")
    f = graphc.function([x], [x.sum(), T.exp(x).sum(), x.mean()], mode=MODES[mode])
    s, e, m = f(xv)
    ref = xv.astype("float64")
    assert s.dtype == e.dtype == m.dtype == np.float32
    assert _rel(s, ref.sum()) < 1e-6
    assert _rel(e, np.exp(xv).astype("float64").sum()) < 1e-6
    assert _rel(m, ref.mean()) < 1e-6


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("axis", [0, 1])
def test_float32_axis_sums_are_accurate(mode, axis):
    # axis 0 keeps the innermost axis: the C code accumulates in a float64 temporary
    shape = (2_000_000, 4) if axis == 0 else (4, 2_000_000)
    x = T.matrix("x", dtype="float32")
    xv = np.random.default_rng(0).uniform(0, 1, size=shape).astype("float32")
    f = graphc.function([x], x.sum(axis=axis), mode=MODES[mode])
    got = f(xv)
    assert got.dtype == np.float32
    assert _rel(got, xv.astype("float64").sum(axis=axis)) < 1e-6


@pytest.mark.parametrize("mode", list(MODES))
def test_float32_prod_is_accurate(mode):
    x = T.vector("x", dtype="float32")
    xv = np.random.default_rng(1).uniform(0.9999, 1.0001, size=10**6).astype("float32")
    got = graphc.function([x], x.prod(), mode=MODES[mode])(xv)
    assert _rel(got, np.prod(xv.astype("float64"))) < 1e-6


@pytest.mark.skipif(not c_available(), reason="no C compiler")
def test_fused_sums_accumulate_in_float64():
    # t = exp(x); [t * 2, t.sum()] becomes one ElemwiseSums loop
    x = T.vector("x", dtype="float32")
    t = T.exp(x)
    f = graphc.function([x], [t * 2, t.sum()], mode="FAST_RUN")
    assert any(isinstance(n.op, ElemwiseSums) for n in f.maker.fgraph.toposort())
    xv = np.random.default_rng(2).uniform(-1, 1, size=N).astype("float32")
    doubled, s = f(xv)
    t32 = np.exp(xv)
    np.testing.assert_allclose(doubled, t32 * np.float32(2), rtol=1e-6)
    assert _rel(s, t32.astype("float64").sum()) < 1e-6


def test_theano_default_dtypes():
    # Theano's docs: the output keeps the input dtype except narrow integers (int64 /
    # uint64); the accumulator is at least int64 / uint64 / float64
    cases = {"bool": ("int64", "int64"), "int8": ("int64", "int64"),
             "uint16": ("uint64", "uint64"), "int64": ("int64", "int64"),
             "float32": ("float32", "float64"), "float64": ("float64", "float64")}  # fmt: skip
    for dt, (out, acc) in cases.items():
        s = T.vector("x", dtype=dt).sum()
        assert s.dtype == out, dt
        assert s.owner.op.accumulator(dt) == acc, dt
        assert T.vector("x", dtype=dt).prod().owner.op.accumulator(dt) == acc, dt


@pytest.mark.parametrize("mode", list(MODES))
def test_dtype_casts_only_the_result(mode):
    # 100 + 100 + 100 is 300 in the int64 accumulator, then cast: numpy's int8 of 300
    x = T.vector("x", dtype="int8")
    f = graphc.function([x], [x.sum(dtype="int8"), x.sum()], mode=MODES[mode])
    small, wide = f(np.array([100, 100, 100], dtype="int8"))
    assert small.dtype == np.int8 and small == np.int64(300).astype("int8")
    assert wide.dtype == np.int64 and wide == 300


@pytest.mark.parametrize("mode", list(MODES))
def test_explicit_acc_dtype(mode):
    # a float accumulator for integers is allowed (Theano): 2**62 * 4 wraps in int64
    x = T.vector("x", dtype="int64")
    xv = np.full(4, 2**62, dtype="int64")
    got = graphc.function([x], x.sum(acc_dtype="float64"), mode=MODES[mode])(xv)
    assert got.dtype == np.int64
    assert got == np.float64(2**64).astype("int64")
    y = T.vector("y", dtype="float32")
    s = y.sum(acc_dtype="float32")
    assert s.owner.op.accumulator("float32") == "float32" and s.dtype == "float32"
    assert "acc=float32" in str(s.owner.op)


def test_acc_dtype_that_loses_precision_is_refused():
    with pytest.raises(TypeError, match="lose precision"):
        T.vector("x").sum(acc_dtype="float32")
    with pytest.raises(TypeError, match="lose precision"):
        T.vector("x", dtype="int64").prod(acc_dtype="int8")
    with pytest.raises(TypeError, match="dtype or acc_dtype"):
        CAReduce(T.maximum(T.scalar(), T.scalar()).owner.op.scalar_op, (0,), "float64")


@pytest.mark.parametrize("mode", list(MODES))
def test_integer_mean_accumulates_in_float64(mode):
    # an int64 sum of these wraps; numpy's mean (float64 accumulator) does not
    x = T.vector("x", dtype="int64")
    xv = np.full(4, 2**62, dtype="int64")
    got = graphc.function([x], x.mean(), mode=MODES[mode])(xv)
    assert got.dtype == np.float64 and got == np.mean(xv)


@st.composite
def long_reductions(draw):
    """A float32 input of 2**17 to 2**21 elements, a reduction of it and a mode."""
    n = 2 ** draw(st.integers(17, 21))
    rows = 2 ** draw(st.integers(0, 4))
    return (draw(st.sampled_from(["sum", "mean", "exp_sum", "fused"])),
            (rows, n // rows), draw(st.sampled_from([None, 0, 1])),
            draw(st.sampled_from(["c", "fortran", "strided"])),
            draw(st.sampled_from(list(MODES))), draw(st.integers(0, 2**31)))  # fmt: skip


def _check_reduction(recipe) -> None:
    kind, shape, axis, layout, mode, seed = recipe
    xv = np.random.default_rng(seed).uniform(-1, 1, size=shape).astype("float32")
    if layout == "fortran":
        xv = np.asfortranarray(xv)
    elif layout == "strided":
        xv = np.repeat(xv, 2, axis=1)[:, ::2]
    x = T.matrix("x", dtype="float32")
    terms = np.exp(xv) if kind in ("exp_sum", "fused") else xv
    t = T.exp(x) if kind in ("exp_sum", "fused") else x
    outs = [t.mean(axis=axis) if kind == "mean" else t.sum(axis=axis)]
    if kind == "fused":
        outs.append(t * 2)  # kept and summed in one loop when the sum is over every axis
    got = graphc.function([x], outs, mode=MODES[mode])(xv)[0]
    t64 = terms.astype("float64")
    want = t64.mean(axis=axis) if kind == "mean" else t64.sum(axis=axis)
    scale = np.abs(t64).mean(axis=axis) if kind == "mean" else np.abs(t64).sum(axis=axis)
    assert got.dtype == np.float32, recipe
    # float64 accumulation: the result's own float32 rounding and the float32 terms'
    # ulp differences (vector exp), far below a float32 accumulator's error at this length
    err = np.abs(got.astype("float64") - want)
    assert np.all(err <= 1e-6 * scale + 1e-7 * np.abs(want)), (recipe, float(np.max(err)))


@pytest.mark.fuzz
def test_fuzz_long_float32_reductions_match_float64(fuzz_examples):
    n = max(4, fuzz_examples // 2)

    @settings(max_examples=n, deadline=None, database=None, derandomize=n <= 200,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(long_reductions())
    def run(recipe):
        _check_reduction(recipe)

    run()


@pytest.mark.skipif(not c_available(), reason="no C compiler")
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [0, 1])
def test_float32_softmax_of_long_axes_sums_in_float64(fn, axis):
    # the normaliser is a sum of 2**21 terms: a float32 accumulator is off by ~1e-5
    from graphc.tensor import nnet

    shape = (2**21, 2) if axis == 0 else (2, 2**21)
    xv = np.random.default_rng(3).uniform(-1, 1, size=shape).astype("float32")
    x = T.matrix("x", dtype="float32")
    got = graphc.function([x], getattr(nnet, fn)(x, axis=axis), mode="FAST_RUN")(xv)
    x64 = xv.astype("float64")
    logz = np.log(np.exp(x64).sum(axis=axis, keepdims=True))
    want = x64 - logz if fn == "log_softmax" else np.exp(x64 - logz)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 if fn == "log_softmax" else 0)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_float32_vector_dot_accumulates_in_float64(mode, layout):
    # an inner product is a sum: float32 BLAS sdot is off by ~2e-5 on 10**7 terms
    v = T.vector("v", dtype="float32")
    w = T.vector("w", dtype="float32")
    rng = np.random.default_rng(4)
    vv, wv = (rng.uniform(0, 1, size=10**7 + 6).astype("float32") for _ in range(2))
    if layout == "strided":
        vv, wv = vv[::2], wv[1::2]
    got = graphc.function([v, w], T.dot(v, w), mode=MODES[mode])(vv, wv)
    assert got.dtype == np.float32
    assert _rel(got, np.dot(vv.astype("float64"), wv.astype("float64"))) < 1e-6
