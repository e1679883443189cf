"""A function's returned values kept as the next call's output buffers: reused once the
caller lets go of them, never overwritten while anything still holds them."""

from __future__ import annotations

import numpy as np
import pytest
from alloc_checks import peak_growth

import graphc
import graphc.tensor as T

LINKERS = ["c|py", "vm"]  # the Cython VM and the reference Python VM running C thunks


def _fn(linker):
    x, y = T.dvector("x"), T.dvector("y")
    return graphc.function([x, y], T.exp(x) * y + T.tanh(y), mode=graphc.Mode(linker=linker))


def _want(xv, yv):
    return np.exp(xv) * yv + np.tanh(yv)


def _inputs(rng, n=5000):
    return rng.normal(size=n), rng.normal(size=n)


@pytest.mark.parametrize("linker", LINKERS)
def test_a_dropped_result_is_the_next_calls_buffer(linker):
    f = _fn(linker)
    rng = np.random.default_rng(0)
    addresses = set()
    for _ in range(5):
        xv, yv = _inputs(rng)
        out = f(xv, yv)
        np.testing.assert_allclose(out, _want(xv, yv), rtol=1e-13)
        addresses.add(out.ctypes.data)
        del out
    assert len(addresses) == 1


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("keep", ["array", "view", "memoryview"])
def test_a_held_result_is_never_overwritten(linker, keep):
    f = _fn(linker)
    rng = np.random.default_rng(1)
    kept = []
    for _ in range(4):
        xv, yv = _inputs(rng)
        out = f(xv, yv)
        holder = {"array": out, "view": out[::2], "memoryview": memoryview(out)}[keep]
        kept.append((holder, _want(xv, yv)[:: 2 if keep == "view" else 1]))
        del out
    for holder, want in kept:
        np.testing.assert_allclose(np.asarray(holder), want, rtol=1e-13)


@pytest.mark.parametrize("linker", LINKERS)
def test_steady_state_calls_allocate_no_output(linker):
    f = _fn(linker)
    xv, yv = _inputs(np.random.default_rng(2), 20000)
    for _ in range(3):
        f(xv, yv)
    _, growth = peak_growth(lambda: f(xv, yv))
    assert growth < xv.nbytes  # no new 160 KB output array


def test_several_outputs_and_an_input_returned():
    x = T.dvector("x")
    f = graphc.function([x], [x * 2.0, x, T.exp(x)])
    rng = np.random.default_rng(3)
    results = []
    for _ in range(3):
        xv = rng.normal(size=1000)
        a, same, e = f(xv)
        results.append((xv, a, same, e))
    for xv, a, same, e in results:  # every call's values held: none written over
        np.testing.assert_array_equal(a, xv * 2.0)
        np.testing.assert_array_equal(same, xv)
        np.testing.assert_allclose(e, np.exp(xv), rtol=1e-13)


def test_the_kept_buffer_is_counted_as_held():
    f = _fn("c|py")
    xv, yv = _inputs(np.random.default_rng(4), 10000)
    before = f.vm.held_bytes()
    f(xv, yv)  # the result is dropped at once
    assert f.vm.held_bytes() - before >= xv.nbytes
