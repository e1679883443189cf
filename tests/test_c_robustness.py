"""Generated C never crashes on what it is handed and never disagrees with numpy: trusted
inputs of the wrong kind, uint64 indices past 2**63, signed/unsigned 64-bit comparisons,
and helpers of several Ops and dtypes in one module."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.linker import clinker

pytestmark = pytest.mark.skipif(not clinker.available(), reason="no C compiler")

CPY = graphc.Mode(linker="c|py", optimizer="fast_run")
PY = graphc.Mode(linker="py", optimizer="fast_run")

BAD_VALUES = [3, 2.5, None, "abc", [1.0, 2.0], np.float64(1.0), np.ones(3), np.ones((2, 2)),
              np.arange(3), np.ones(2, dtype=np.float32), object()]  # fmt: skip


def _trusted(inputs, outputs):
    f = graphc.function(inputs, outputs, mode=CPY, on_unused_input="ignore")
    f.trust_input = True
    return f


@pytest.mark.parametrize("bad", BAD_VALUES, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("position", [0, 1])
def test_trusted_subtensor_refuses_anything_but_its_declared_arrays(bad, position):
    x, i = T.dvector("x"), T.lscalar("i")
    f = _trusted([x, i], x[i])
    args = [np.arange(5.0), np.array(2)]
    args[position] = bad
    ok = isinstance(bad, np.ndarray) and bad.shape == args[position].shape
    ok = ok and bad.dtype == [np.float64, np.int64][position]
    if ok:
        return
    with pytest.raises(TypeError, match=rf"Subtensor.*input {position}"):
        f(*args)
    assert f(np.arange(5.0), np.array(2)) == 2.0  # and the function still works


@pytest.mark.parametrize("bad", BAD_VALUES, ids=lambda v: type(v).__name__)
def test_every_trusted_c_thunk_refuses_wrong_values(bad):
    m, v, k = T.dmatrix("m"), T.dvector("v"), T.lscalar("k")
    outs = [T.exp(m) + 1, T.dot(m, v), m.sum(axis=0), T.argmax(m, axis=1),
            T.nnet.softmax(m), m.reshape((-1,)), T.concatenate([v, v]), T.alloc(v, k, 3),
            m[k]]  # fmt: skip
    good = [np.ones((3, 3)), np.ones(3), np.array(2)]
    for out in outs:
        f = graphc.function([m, v, k], out, mode=CPY, on_unused_input="ignore")
        f.trust_input = True
        want = f(*good)
        for pos in range(3):
            args = list(good)
            args[pos] = bad
            try:
                f(*args)
            except (TypeError, ValueError, IndexError):
                pass  # refused with a Python error: never a crash
        np.testing.assert_array_equal(f(*good), want)


def test_trusted_numpy_scalars_are_converted_not_read_as_arrays():
    x, i = T.dvector("x"), T.lscalar("i")
    f = _trusted([x, i], x[i])
    assert f(np.arange(5.0), np.int64(3)) == 3.0
    assert f(np.arange(5.0), np.array(3, dtype=np.longlong)) == 3.0  # an equivalent type


@pytest.mark.parametrize("mode", [CPY, PY], ids=["c|py", "py"])
@pytest.mark.parametrize("k", [2**63, 2**63 + 5, 2**64 - 1])
def test_uint64_slice_bounds_past_2_63_clamp_as_in_numpy(mode, k):
    x, u = T.dvector("x"), T.scalar("u", dtype="uint64")
    f = graphc.function([x, u], [x[:u], x[u:], x[:u:2]], mode=mode)
    xv = np.arange(4.0)
    got = f(xv, np.uint64(k))
    for g, w in zip(got, [xv[:k], xv[k:], xv[:k:2]]):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("mode", [CPY, PY], ids=["c|py", "py"])
def test_uint64_index_past_2_63_is_out_of_bounds_not_negative(mode):
    x, u = T.dvector("x"), T.scalar("u", dtype="uint64")
    f = graphc.function([x, u], x[u], mode=mode)
    with pytest.raises((IndexError, OverflowError)):
        f(np.arange(4.0), np.uint64(2**64 - 1))
    assert f(np.arange(4.0), np.uint64(3)) == 3.0


CMPS = [(T.eq, operator.eq), (T.neq, operator.ne), (T.lt, operator.lt), (T.gt, operator.gt),
        (T.le, operator.le), (T.ge, operator.ge)]  # fmt: skip
SIGNED = [2**53 + 1, 2**53, -1, 0, 2**63 - 1, -(2**63)]
UNSIGNED = [2**53, 2**53 + 1, 0, 2**64 - 1, 2**63, 2**63 - 1]


@pytest.mark.parametrize("mode", [CPY, PY], ids=["c|py", "py"])
@pytest.mark.parametrize("sdt", ["int64", "int32", "int8"])
def test_signed_unsigned_64_bit_comparisons_are_exact(mode, sdt):
    i, u = T.scalar("i", dtype=sdt), T.scalar("u", dtype="uint64")
    outs = [g(i, u) for g, _ in CMPS] + [g(u, i) for g, _ in CMPS]
    f = graphc.function([i, u], outs, mode=mode)
    info = np.iinfo(sdt)
    for a, b in itertools.product(SIGNED, UNSIGNED):
        a = int(np.clip(a, info.min, info.max))
        want = [p(a, b) for _, p in CMPS] + [p(b, a) for _, p in CMPS]
        got = [bool(r) for r in f(np.array(a, sdt), np.uint64(b))]
        assert got == want, (a, b)


def test_helpers_of_several_ops_and_dtypes_share_one_module():
    xs = [T.matrix(f"x{dt}", dtype=dt) for dt in ("float32", "float64")]
    outs = []
    for x in xs:
        sm = T.nnet.softmax(x)
        outs += [sm, T.log(sm), T.dot(x, x.T), T.exp(x).sum(axis=1), x[1:, ::2]]
    f = graphc.function(xs, outs, mode=CPY)
    g = graphc.function(xs, outs, mode=PY)
    rng = np.random.default_rng(0)
    vals = [rng.normal(size=(3, 3)).astype(dt) for dt in ("float32", "float64")]
    for a, b in zip(f(*vals), g(*vals)):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_a_helper_defined_by_two_support_blocks_is_refused_at_generation():
    block = "static int graphc_twice(int a) {\n    return 2 * a;\n}\n"
    other = "static int graphc_twice(int a) {\n    return a + a;\n}\n"
    with pytest.raises(ValueError, match="graphc_twice"):
        clinker._check_helpers_unique([block, other])
    clinker._check_helpers_unique([block, block.replace("twice", "thrice")])
