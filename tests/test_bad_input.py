"""Compiled functions (py and c|py) fed wrong or unusual arguments: each case gets a clear
Python exception or a correct result, never a crash, and shared variables keep their values
after a failed call."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.mode import Mode
from graphc.linker import c_available

LINKERS = ["py"] + (["c|py"] if c_available() else [])
_FUNCS: dict = {}


def _make(linker: str):
    """f(x: float64 matrix, v: float64 vector) -> [exp(x) * v, x.sum(axis=0)], updating the
    shared scalar s <- s + v.sum()."""
    if linker not in _FUNCS:
        x, v = T.matrix("x"), T.vector("v")
        s = graphc.shared(np.float64(0.0), name="s")
        f = graphc.function([x, v], [T.exp(x) * v, x.sum(axis=0)],
                            updates=[(s, s + v.sum())], mode=Mode(linker=linker))  # fmt: skip
        _FUNCS[linker] = (f, s)
    return _FUNCS[linker]


def _expected(x, v):
    x = np.asarray(x, dtype="float64")
    v = np.asarray(v, dtype="float64")
    with np.errstate(all="ignore"):
        return [np.exp(x) * v, x.sum(axis=0)], float(v.sum())


M = np.arange(6.0).reshape(2, 3) / 4
V = np.array([1.0, -2.0, 0.5])

OK = {
    "float64": (M, V),
    "float32 upcast": (M.astype("float32"), V.astype("float32")),
    "int64 upcast": (np.arange(6).reshape(2, 3), np.array([1, 2, 3])),
    "bool upcast": (M, np.array([True, False, True])),
    "nested lists": (M.tolist(), V.tolist()),
    "read-only": (np.require(M, requirements="C").copy(), V.copy()),
    "strided": (np.arange(12.0).reshape(2, 6)[:, ::2] / 4, np.arange(6.0)[::2]),
    "transposed": (np.arange(6.0).reshape(3, 2).T / 4, V),
    "fortran": (np.asfortranarray(M), V),
    "reversed": (M[::-1, ::-1], V[::-1]),
    "broadcast view (0 strides)": (np.broadcast_to(V, (4, 3)), V),
    "broadcast v": (M, np.array([2.0])),
    "nan and inf": (np.array([[np.nan, np.inf, -np.inf], [0.0, 1.0, 2.0]]), V),
    "zero rows": (np.zeros((0, 3)), V),
    "zero columns": (np.zeros((2, 0)), np.zeros(0)),
    "one element": (np.ones((1, 1)), np.ones(1)),
    "huge values": (np.full((2, 3), 1e300), np.full(3, 1e300)),
    "unaligned": (
        np.frombuffer(np.zeros(6 * 8 + 1, np.uint8).tobytes()[1:], "float64").reshape(2, 3),
        V,
    ),
}
OK["read-only"][0].setflags(write=False)
OK["read-only"][1].setflags(write=False)

BAD = {
    "complex": ((M + 1j, V), TypeError, "complex"),
    "string array": ((M, np.array(["a", "b", "c"])), TypeError, "bad argument 1"),
    "object array": ((M, np.array([1, "a", None], dtype=object)), TypeError, "bad argument 1"),
    "None": ((None, V), TypeError, "bad argument 0"),
    "str": (("abc", V), TypeError, "bad argument 0"),
    "dict": (({"a": 1}, V), TypeError, "bad argument 0"),
    "object()": ((object(), V), TypeError, "bad argument 0"),
    "ragged list": (([[1.0, 2.0], [3.0]], V), (TypeError, ValueError), "bad argument 0"),
    "1-d for a matrix": ((V, V), TypeError, "dimensions"),
    "3-d for a matrix": ((np.zeros((1, 2, 3)), V), TypeError, "dimensions"),
    "0-d for a vector": ((M, np.float64(1.0)), TypeError, "dimensions"),
    "shapes do not broadcast": ((M, np.ones(4)), ValueError, ""),
    "zero-size vs 3": ((M, np.zeros(0)), ValueError, ""),
}


@pytest.fixture(params=LINKERS)
def linker(request):
    return request.param


@pytest.mark.parametrize("case", list(OK))
def test_accepted_inputs_give_correct_results(linker, case):
    f, s = _make(linker)
    x, v = OK[case]
    before = float(s.get_value())
    x_copy, v_copy = np.array(x, copy=True), np.array(v, copy=True)
    got = f(x, v)
    want, dv = _expected(x, v)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(s.get_value(), before + dv, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(x, dtype=float), np.asarray(x_copy, dtype=float))
    np.testing.assert_array_equal(np.asarray(v, dtype=float), np.asarray(v_copy, dtype=float))
    s.set_value(np.float64(0.0))


@pytest.mark.parametrize("case", list(BAD))
def test_rejected_inputs_raise_and_keep_shared_values(linker, case):
    f, s = _make(linker)
    s.set_value(np.float64(7.0))
    args, exc, words = BAD[case]
    with pytest.raises(exc) as info:
        f(*args)
    assert words in str(info.value)
    assert float(s.get_value()) == 7.0
    # the function still works afterwards
    got = f(M, V)
    np.testing.assert_allclose(got[0], np.exp(M) * V)
    s.set_value(np.float64(0.0))


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda f: f(M), TypeError, "missing input 1"),
        (lambda f: f(M, V, V), TypeError, "at most 2"),
        (lambda f: f(M, w=V), TypeError, "unknown keyword"),
        (lambda f: f(M, V, x=M), TypeError, "multiple values"),
    ],
    ids=["missing", "too many", "unknown keyword", "twice"],
)
def test_bad_call_signatures(linker, call, exc, words):
    f, s = _make(linker)
    before = float(s.get_value())
    with pytest.raises(exc, match=words):
        call(f)
    assert float(s.get_value()) == before


@pytest.mark.parametrize(
    "dtype, value, ok",
    [
        ("int8", 300, False),
        ("int8", -5, True),
        ("uint8", -1, False),
        ("float32", np.float64(1.5), False),
        ("float32", 1.5, True),
        ("int64", 2.5, False),
        ("int64", True, True),
    ],
)
def test_scalar_conversions(linker, dtype, value, ok):
    x = T.scalar("x", dtype=dtype)
    f = graphc.function([x], x * 2, mode=Mode(linker=linker))
    if ok:
        assert f(value) == np.asarray(value, dtype=dtype) * 2
    else:
        with pytest.raises(TypeError, match="bad argument 0"):
            f(value)


@pytest.mark.parametrize("red", ["max", "min", "argmax", "sum"])
def test_nan_in_reductions_follows_numpy(linker, red):
    x = T.matrix("x")
    f = graphc.function([x], getattr(T, red)(x, axis=1), mode=Mode(linker=linker))
    xv = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.inf], [-np.inf, 0.0, 1.0]])
    np.testing.assert_array_equal(f(xv), getattr(np, red)(xv, axis=1))


def test_empty_reduction_without_identity_raises(linker):
    x = T.matrix("x")
    f = graphc.function([x], T.max(x, axis=1), mode=Mode(linker=linker))
    assert f(np.zeros((0, 3))).shape == (0,)
    with pytest.raises(ValueError):
        f(np.zeros((2, 0)))


HUGE = {
    "(2**40,) float64 view": ("float64", (2**40,)),
    "(2**20, 2**21) float64 view": ("float64", (2**20, 2**21)),
    "(2**31, 2**31) int8 view: float64 result overflows nbytes": ("int8", (2**31, 2**31)),
}


@pytest.mark.parametrize("case", list(HUGE))
def test_huge_shapes_raise_memory_or_value_error(linker, case):
    dtype, shape = HUGE[case]
    val = np.broadcast_to(np.zeros((1,) * len(shape), dtype), shape)
    x = T.tensor(dtype, shape=[None] * val.ndim, name="x")
    f = graphc.function([x], T.exp(T.cast(x, "float64")) * 2, mode=Mode(linker=linker))
    with pytest.raises((MemoryError, ValueError)):
        f(val)
    np.testing.assert_allclose(f(np.zeros((2,) * val.ndim, dtype)), 2.0)
