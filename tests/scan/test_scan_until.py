"""Loops that stop early: a step may return ``[outputs, until(c)]`` as a list (as Theano
accepts) as well as the tuple, and gradients go through the steps the loop ran. References:
plain Python loops and central finite differences (float64, rtol 1e-6; Hessian-vector
products by four-point differences, rtol 1e-5)."""

from __future__ import annotations

import numpy as np
import pytest
from fd_reference import fd_directional, fd_grad, fd_hvp

import graphc
import graphc.tensor as T
from graphc.scan_module import until


def _doubling_until_over(limit):
    def numpy_loop(x):
        out = []
        while True:
            x = x * 2
            out.append(x)
            if x > limit:
                return out

    return numpy_loop


@pytest.mark.parametrize("form", ["list", "tuple"])
def test_a_step_may_return_outputs_and_until_as_a_list(form):
    x0 = T.scalar("x0")

    def step(x):
        ret = [x * 2, until(x * 2 > 100)]
        return ret if form == "list" else tuple(ret)

    out, _ = graphc.scan(step, outputs_info=x0, n_steps=1000)
    f = graphc.function([x0], out)
    for start in (3.0, 200.0, -1.0 / 1024):
        want = _doubling_until_over(100)(start) if start > 0 else None
        if want is not None:
            np.testing.assert_array_equal(f(start), want)
        else:
            assert len(f(start)) == 1000 and f(start)[-1] < 0


def test_a_list_of_several_outputs_until_and_updates():
    count = graphc.shared(np.int64(0), name="count")
    x0 = T.scalar("x0")

    def step(x, y):
        return [[x + 1, y * x], {count: count + 1}, until(x + 1 >= 4)]

    (xs, ys), updates = graphc.scan(step, outputs_info=[x0, T.constant(1.0)], n_steps=10)
    f = graphc.function([x0], [xs, ys], updates=updates)
    got_x, got_y = f(1.0)
    x, y, want_x, want_y = 1.0, 1.0, [], []
    while True:
        x, y = x + 1, y * x
        want_x.append(x)
        want_y.append(y)
        if x >= 4:
            break
    np.testing.assert_array_equal(got_x, want_x)
    np.testing.assert_array_equal(got_y, want_y)
    assert int(count.get_value()) == len(want_x)


def _rnn_until(x, h0, W, stop_at):
    """An RNN over ``x`` that stops after the step whose index is ``stop_at`` (a stacked
    ``tanh`` state, a stacked output not fed back, and the step counter as a second state)."""

    def step(xt, h, i, W):
        new = T.tanh(T.dot(W, h) + T.dot(W.T, h) * 0.5 + xt)
        return [new, i + 1, (new * xt).sum()], until(T.ge(i, stop_at))

    (hs, _, ys), _ = graphc.scan(step, sequences=x, non_sequences=W,
                                 outputs_info=[h0, T.constant(np.int64(0)), None])  # fmt: skip
    return (hs**2).sum() + ys.sum() * 0.3 + (hs[-1] * 0.7).sum()


@pytest.mark.parametrize("stop_at", [0, 2, 10])
def test_gradients_through_a_loop_that_stops_early(stop_at):
    x, h0, W = T.matrix("x"), T.vector("h0"), T.matrix("W")
    cost = _rnn_until(x, h0, W, stop_at)
    f = graphc.function([x, h0, W], cost)
    rng = np.random.default_rng(stop_at)
    pts = [rng.normal(size=(6, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.4]
    grads = graphc.function([x, h0, W], graphc.grad(cost, [x, h0, W]))(*pts)
    for k in range(3):
        np.testing.assert_allclose(grads[k], fd_grad(f, pts, k), rtol=1e-6, atol=1e-8)
    if stop_at < 5:  # the rows after the stop get no gradient
        assert not grads[0][stop_at + 1 :].any() and grads[0][stop_at].any()


def test_second_derivatives_and_rop_through_a_loop_that_stops_early():
    x, h0, W, V = T.matrix("x"), T.vector("h0"), T.matrix("W"), T.matrix("V")
    cost = _rnn_until(x, h0, W, 3)
    g = graphc.grad(cost, W)
    f = graphc.function([x, h0, W], cost)
    fg = graphc.function([x, h0, W], g)
    by_rop = graphc.function([x, h0, W, V], T.Rop(g, W, V))
    by_grad = graphc.function([x, h0, W, V], graphc.grad((g * V).sum(), W))
    rng = np.random.default_rng(7)
    pts = [rng.normal(size=(6, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.4]
    vv = rng.normal(size=(3, 3))
    want = fd_hvp(f, pts, 2, vv)
    np.testing.assert_allclose(by_rop(*pts, vv), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(by_grad(*pts, vv), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fd_directional(fg, pts, 2, vv), want, rtol=1e-5, atol=1e-6)
