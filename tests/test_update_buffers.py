"""Shared-variable updates written into the replaced values (double buffering), and failed
calls that leave every shared value bit-identical."""

from __future__ import annotations

import numpy as np
import pytest
from alloc_checks import peak_growth

import graphc
import graphc.tensor as T

LINKERS = ["c|py", "vm"]  # the Cython VM and the reference Python VM running C thunks


def _sgd(linker):
    rng = np.random.default_rng(0)
    w = graphc.shared(rng.normal(size=(50, 40)), name="w")
    b = graphc.shared(rng.normal(size=40), name="b")
    x = T.dmatrix("x")
    cost = T.tanh(T.dot(x, w) + b).sum()
    gw, gb = graphc.grad(cost, [w, b])
    f = graphc.function(
        [x], cost, updates=[(w, w - 0.01 * gw), (b, b - 0.01 * gb)],
        mode=graphc.Mode(linker=linker),
    )  # fmt: skip
    return f, w, b, rng


def _numpy_step(x, w, b):
    h = np.tanh(x @ w + b)
    d = 1 - h**2
    return (w - 0.01 * (x.T @ d), b - 0.01 * d.sum(0))


@pytest.mark.parametrize("linker", LINKERS)
def test_updates_reuse_the_replaced_values(linker):
    f, w, b, rng = _sgd(linker)
    x = rng.normal(size=(8, 50))
    seen = set()
    for _ in range(6):
        want = _numpy_step(x, w.get_value(), b.get_value())
        f(x)
        np.testing.assert_allclose(w.get_value(borrow=True), want[0], rtol=1e-12)
        np.testing.assert_allclose(b.get_value(borrow=True), want[1], rtol=1e-12)
        seen.add(w.get_value(borrow=True).ctypes.data)
    assert len(seen) == 2  # two buffers alternate


@pytest.mark.parametrize("linker", LINKERS)
def test_held_values_are_never_overwritten(linker):
    f, w, b, rng = _sgd(linker)
    x = rng.normal(size=(8, 50))
    kept = []
    for _ in range(4):
        held = w.get_value(borrow=True)  # the caller keeps the old value alive
        copy = held.copy()
        f(x)
        kept.append((held, copy))
    for held, copy in kept:
        np.testing.assert_array_equal(held, copy)


@pytest.mark.parametrize("linker", LINKERS)
def test_steady_state_update_allocates_nothing_big(linker):
    f, w, b, rng = _sgd(linker)
    x = rng.normal(size=(8, 50))
    for _ in range(3):
        f(x)
    _, growth = peak_growth(lambda: f(x))
    assert growth < w.get_value(borrow=True).nbytes  # no new 16 KB parameter array


def _bits(*shared):
    return [s.get_value().tobytes() for s in shared]


@pytest.mark.parametrize("linker", LINKERS)
def test_failure_in_one_of_several_updates_changes_nothing(linker):
    a = graphc.shared(np.arange(6.0), name="a")
    c = graphc.shared(np.ones((3, 3)), name="c")
    x, m = T.dvector("x"), T.dmatrix("m")
    f = graphc.function(
        [x, m], (a * 2).sum(), updates=[(a, a + x), (c, T.dot(c, m))],
        mode=graphc.Mode(linker=linker),
    )  # fmt: skip
    for _ in range(3):  # the recycled buffers are in use
        f(np.ones(6), np.eye(3))
    before = _bits(a, c)
    with pytest.raises(ValueError):
        f(np.ones(6), np.ones((4, 3)))  # the dot of the second update fails
    assert _bits(a, c) == before
    with pytest.raises(ValueError):
        f(np.ones(5), np.eye(3))  # the first update fails
    assert _bits(a, c) == before
    f(np.ones(6), np.eye(3))
    np.testing.assert_array_equal(a.get_value(), np.arange(6.0) + 4)


@pytest.mark.parametrize("linker", LINKERS)
def test_failure_in_the_last_node_changes_nothing(linker):
    w = graphc.shared(np.linspace(0, 1, 12).reshape(3, 4), name="w")
    v = graphc.shared(np.ones(4), name="v")
    y = T.dvector("y")
    last = T.dot(w, y).sum()  # y of the wrong length fails in the dot
    f = graphc.function(
        [y], last, updates=[(w, w * 0.5), (v, v + 1)], mode=graphc.Mode(linker=linker)
    )
    for _ in range(3):
        f(np.ones(4))
    before = _bits(w, v)
    with pytest.raises(ValueError):
        f(np.ones(5))
    assert _bits(w, v) == before
