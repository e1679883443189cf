"""Loops of no step: their outputs have the shapes numpy gives, also when the trial step
fails (the shapes then come from the step's shape graph), under "c|py" and "py" alike."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.jacobian import hessian, jacobian

LINKERS = ["auto", "py"]


def _compiled(inputs, outputs, linker):
    return graphc.function(inputs, outputs, mode=graphc.Mode(linker=linker))


@pytest.mark.parametrize("linker", LINKERS)
def test_jacobian_and_hessian_of_an_empty_vector(linker):
    x, m = T.dvector("x"), T.dmatrix("m")
    J, Jm = jacobian(T.exp(x) * m.sum(), [x, m])
    H = hessian(T.sum(x**3) * m.sum(), x)
    f = _compiled([x, m], [J, Jm, H], linker)
    for n in (0, 2, 0):
        xv, mv = np.linspace(-1.0, 1.0, n), np.ones((2, 3))
        j, jm, h = f(xv, mv)
        assert j.shape == np.diag(np.exp(xv)).shape == (n, n)
        assert jm.shape == np.multiply.outer(np.exp(xv), mv).shape == (n, 2, 3)
        assert h.shape == np.diag(6 * xv).shape == (n, n)


def _loop(x, idx, M, h0, w):
    """A loop whose step indexes ``M`` with the sequence ``idx``: the trial step of a loop
    of no step fails on an ``M`` of no row. States: ``h`` (taps -1) and ``g`` (taps -2,
    -1); stacked: ``outer(M[i], w)`` and ``M[i] * x.sum()``."""

    def step(i, h, g2, g1, M, w):
        r = M[i]
        return [h + r, g1 + g2 * r.sum(), T.outer(r, w), r * x.sum()]

    outs, _ = graphc.scan(
        step,
        sequences=idx,
        outputs_info=[h0, dict(initial=T.stack([h0.sum(), h0.sum()]), taps=[-2, -1]),
                      None, None],
        non_sequences=[M, w],
    )  # fmt: skip
    return outs


def _numpy_loop(xv, iv, mv, hv, wv) -> list[np.ndarray]:
    hs, gs, outers, scaled = [], [hv.sum(), hv.sum()], [], []
    h = hv
    for i in iv:
        r = mv[i]
        h = h + r
        hs.append(h)
        gs.append(gs[-1] + gs[-2] * r.sum())
        outers.append(np.outer(r, wv))
        scaled.append(r * xv.sum())
    row = np.zeros(mv.shape[1])  # the shape one step would give
    stack = [
        np.array(hs).reshape(len(iv), *hv.shape),
        np.array(gs[2:]).reshape(len(iv)),
        np.array(outers).reshape(len(iv), *np.outer(row, wv).shape),
        np.array(scaled).reshape(len(iv), *(row * xv.sum()).shape),
    ]
    return stack


@pytest.mark.parametrize("linker", LINKERS)
def test_a_loop_of_no_step_whose_trial_step_fails(linker):
    x, idx, M = T.dvector("x"), T.lvector("idx"), T.dmatrix("M")
    h0, w = T.dvector("h0"), T.dvector("w")
    f = _compiled([x, idx, M, h0, w], _loop(x, idx, M, h0, w), linker)
    cases = [
        (np.ones(2), np.zeros(0, "int64"), np.zeros((0, 3)), np.ones(3), np.ones(4)),
        (np.ones(2), np.array([1, 0]), np.arange(6.0).reshape(2, 3), np.ones(3), np.ones(5)),
        (np.ones(7), np.zeros(0, "int64"), np.zeros((0, 5)), np.ones(5), np.ones(2)),
    ]
    for args in cases:
        got = f(*args)
        want = _numpy_loop(*args)
        assert [g.shape for g in got] == [w.shape for w in want]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("linker", LINKERS)
def test_nested_loops_of_no_step(linker):
    """The outer loop runs no step and its trial step fails (``T3[i]`` of no row): the
    shape of its stacked output, an inner loop's states, comes from the shape graph."""
    idx, T3, h0 = T.lvector("idx"), T.dtensor3("T3"), T.dvector("h0")

    def outer_step(i, T3, h0):
        hs, _ = graphc.scan(lambda r, h: h + r, sequences=T3[i], outputs_info=h0)
        return hs * 2.0

    ys, _ = graphc.scan(outer_step, sequences=idx, non_sequences=[T3, h0])
    f = _compiled([idx, T3, h0], ys, linker)
    for n, rows, cols in ((0, 4, 3), (2, 1, 2), (0, 2, 6)):
        iv = np.zeros(n, "int64")
        tv = np.ones((max(n, 1) if n else 0, rows, cols))
        hv = np.ones(cols)
        want = [np.cumsum(tv[i], axis=0) * 2.0 + hv * 2.0 for i in iv]
        got = f(iv, tv, hv)
        assert got.shape == np.array(want).reshape(n, rows, cols).shape
        np.testing.assert_allclose(got, np.array(want).reshape(n, rows, cols))
