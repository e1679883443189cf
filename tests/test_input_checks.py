"""The call's fast input check (``first_unfit``): the compiled twin agrees with the Python
one on every kind of value, and a value it lets through is one the input's type accepts
as it is."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphc.vm.pyvm import first_unfit as py_first_unfit

DTYPES = ("float64", "float32", "float16", "int64", "int8", "uint16", "bool", "complex128")


class _Sub(np.ndarray):
    pass


@st.composite
def values_and_checks(draw):
    n = draw(st.integers(1, 4))
    values, checks = [], []
    for k in range(n):
        dtype = draw(st.sampled_from(DTYPES))
        shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
        kinds = ["array"] * 3 + ["view", "sub", "scalar", "list", "other dtype"]
        kind = draw(st.sampled_from(kinds))
        arr = np.zeros(shape, dtype=dtype)
        v = {
            "array": arr,
            "sub": arr.view(_Sub),
            "view": np.zeros((2,) + shape, dtype=dtype)[1],
            "scalar": arr.dtype.type(0),
            "list": arr.tolist(),
            "other dtype": np.zeros(shape, dtype=draw(st.sampled_from(DTYPES))),
        }[kind]
        # each part of the check matches the value more often than not
        ndim = len(shape) if draw(st.booleans()) else draw(st.integers(0, 4))
        static = None
        if draw(st.booleans()):
            sizes = [None if draw(st.booleans()) else s for s in shape[:ndim]]
            sizes += [None] * (ndim - len(sizes))
            if sizes and draw(st.booleans()):
                d = draw(st.integers(0, len(sizes) - 1))
                sizes[d] = draw(st.integers(0, 3))
            static = tuple(sizes)
        check_dtype = dtype if draw(st.booleans()) else draw(st.sampled_from(DTYPES))
        checks.append((k, np.dtype(check_dtype), ndim, static))
        values.append(v)
    return values, tuple(checks), draw(st.integers(0, n))


@settings(max_examples=400)  # no compiling: cheap
@given(values_and_checks())
def test_the_compiled_check_agrees_with_the_python_one(case):
    from graphc.vm._cvm import first_unfit

    values, checks, start = case
    assert first_unfit(values, checks, start) == py_first_unfit(values, checks, start)


@settings(max_examples=400)
@given(values_and_checks())
def test_a_value_let_through_is_an_exact_array_of_the_checked_type(case):
    values, checks, start = case
    j = py_first_unfit(values, checks, start)
    for k, dt, ndim, static in checks[start : len(checks) if j < 0 else j]:
        v = values[k]
        assert type(v) is np.ndarray and v.dtype == dt and v.ndim == ndim
        assert static is None or all(b is None or a == b for a, b in zip(v.shape, static))
    if j >= 0:
        k, dt, ndim, static = checks[j]
        v = values[k]
        assert not (
            type(v) is np.ndarray
            and v.dtype == dt
            and v.ndim == ndim
            and (static is None or all(b is None or a == b for a, b in zip(v.shape, static)))
        )


def test_a_function_converts_what_the_check_refuses():
    import graphc
    import graphc.tensor as T

    x = T.tensor("float64", (None, 3), name="x")
    f = graphc.function([x], x * 2)
    np.testing.assert_array_equal(f([[1, 2, 3]]), [[2.0, 4.0, 6.0]])  # a list
    np.testing.assert_array_equal(f(np.ones((2, 3), "int8")), np.full((2, 3), 2.0))
    with pytest.raises((TypeError, ValueError), match="bad argument 0"):
        f(np.ones((2, 4)))  # a static size
