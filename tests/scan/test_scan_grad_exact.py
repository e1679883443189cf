"""Gradients through scan against central finite differences (float64): steps that read
outer-only expressions scan hoists out of the loop (``w * w``, ``W.T``, ``W[0]``), tied
weights, second derivatives (Hessian-vector products two ways), Rop and Lop, nested loops.
First derivatives use eps 1e-6 and agree to rtol 1e-6; Hessian-vector products use
four-point differences of the cost (eps 1e-4) and agree to rtol 1e-5, atol 1e-6."""

from __future__ import annotations

import numpy as np
import pytest
from fd_reference import fd_directional, fd_grad, fd_hvp

import graphc
import graphc.tensor as T

RNG = np.random.default_rng(20)


def _rnn(step, n=5, d=3, w_shape=None):
    """Symbolic ``(x, h0, w)``, the scan's cost ``sum(hs ** 2)`` and numeric points."""
    w_shape = (d, d) if w_shape is None else w_shape
    x, h0 = T.matrix("x"), T.vector("h0")
    w = T.TensorType("float64", (None,) * len(w_shape))("w")
    hs, _ = graphc.scan(step, sequences=x, outputs_info=h0, non_sequences=w)
    cost = (hs**2).sum()
    pts = [RNG.normal(size=(n, d)), RNG.normal(size=d) * 0.5, RNG.normal(size=w_shape) * 0.4]
    return [x, h0, w], cost, pts


STEPS = {
    "h*w + h*(w*w)": (lambda x, h, w: T.sin(h * w + h * (w * w) + x), (3,)),
    "tied W and W.T": (lambda x, h, W: T.tanh(T.dot(W, h) + T.dot(W.T, h) + x), None),
    "W and W[0]": (lambda x, h, W: T.tanh(T.dot(W, h) + W[0] * h + x), None),
    "W.T alone": (lambda x, h, W: T.tanh(T.dot(W.T, h) + x), None),
    "exp(W) and W": (lambda x, h, W: T.tanh(T.dot(T.exp(W), h) * 0.3 + T.dot(W, h) + x), None),
}


@pytest.mark.parametrize("name", sorted(STEPS))
def test_first_derivatives_of_steps_reading_hoisted_expressions(name):
    step, w_shape = STEPS[name]
    inputs, cost, pts = _rnn(step, w_shape=w_shape)
    f = graphc.function(inputs, cost)
    grads = graphc.function(inputs, graphc.grad(cost, inputs))(*pts)
    for k in range(3):
        np.testing.assert_allclose(grads[k], fd_grad(f, pts, k), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name}: gradient of input {k}")  # fmt: skip


@pytest.mark.parametrize("name", ["plain RNN", *sorted(STEPS)])
def test_hessian_vector_products_by_rop_and_by_grad(name):
    step, w_shape = STEPS.get(name, (lambda x, h, W: T.tanh(T.dot(W, h) + x), None))
    inputs, cost, pts = _rnn(step, w_shape=w_shape)
    w = inputs[2]
    v = w.type("v")
    g = graphc.grad(cost, w)
    by_rop = graphc.function([*inputs, v], T.Rop(g, w, v))
    by_grad = graphc.function([*inputs, v], graphc.grad((g * v).sum(), w))
    f = graphc.function(inputs, cost)
    vv = RNG.normal(size=pts[2].shape)
    want = fd_hvp(f, pts, 2, vv)
    assert np.abs(want).max() > 0.1
    np.testing.assert_allclose(by_rop(*pts, vv), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(by_grad(*pts, vv), want, rtol=1e-5, atol=1e-6)


def test_hessian_of_a_scalar_weight_used_as_w_and_w_times_w():
    x, w = T.vector("x"), T.scalar("w")
    hs, _ = graphc.scan(lambda xt, h, w: T.sin(h * w + h * (w * w) + xt), sequences=x,
                        outputs_info=T.constant(0.3), non_sequences=w)  # fmt: skip
    cost = hs.sum()
    f = graphc.function([x, w], cost)
    d2 = graphc.function([x, w], graphc.grad(graphc.grad(cost, w), w))
    pts = [RNG.normal(size=4), np.array(0.7)]
    np.testing.assert_allclose(d2(*pts), fd_hvp(f, pts, 1, np.array(1.0)), rtol=1e-5, atol=1e-6)


def test_rop_and_lop_through_a_loop_with_tied_weights():
    step = STEPS["tied W and W.T"][0]
    (x, h0, W), _, pts = _rnn(step)
    hs, _ = graphc.scan(step, sequences=x, outputs_info=h0, non_sequences=W)
    y = hs[-1]
    V, u = T.matrix("V"), T.vector("u")
    fy = graphc.function([x, h0, W], y)
    jv = graphc.function([x, h0, W, V], T.Rop(y, W, V))
    uj = graphc.function([x, h0, W, u], T.Lop(y, W, u))
    vv, uv = RNG.normal(size=(3, 3)), RNG.normal(size=3)
    np.testing.assert_allclose(jv(*pts, vv), fd_directional(fy, pts, 2, vv), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(uj(*pts, uv), fd_grad(lambda *a: uv @ fy(*a), pts, 2),
                               rtol=1e-6, atol=1e-9)  # fmt: skip


def _nested(x, h0, W):
    """An outer loop over the rows of ``x`` whose step runs an inner loop of 3 steps that
    reads ``W`` and ``W.T`` (hoisted by the inner scan) and the outer row."""

    def outer_step(xt, h, W):
        inner, _ = graphc.scan(lambda g, xt, W: T.tanh(T.dot(W, g) + T.dot(W.T, g) * 0.5 + xt),
                               outputs_info=h, non_sequences=[xt, W], n_steps=3)  # fmt: skip
        return inner[-1]

    hs, _ = graphc.scan(outer_step, sequences=x, outputs_info=h0, non_sequences=W)
    return (hs**2).sum()


def test_nested_loops_first_and_second_derivatives():
    x, h0, W, V = T.matrix("x"), T.vector("h0"), T.matrix("W"), T.matrix("V")
    cost = _nested(x, h0, W)
    f = graphc.function([x, h0, W], cost)
    pts = [RNG.normal(size=(3, 2)), RNG.normal(size=2) * 0.5, RNG.normal(size=(2, 2)) * 0.4]
    grads = graphc.function([x, h0, W], graphc.grad(cost, [x, h0, W]))(*pts)
    for k in range(3):
        np.testing.assert_allclose(grads[k], fd_grad(f, pts, k), rtol=1e-6, atol=1e-8)
    g = graphc.grad(cost, W)
    hvp = graphc.function([x, h0, W, V], graphc.grad((g * V).sum(), W))
    vv = RNG.normal(size=(2, 2))
    np.testing.assert_allclose(hvp(*pts, vv), fd_hvp(f, pts, 2, vv), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("d", [1, 3])
def test_hessian_vector_product_under_the_python_linker(d):
    """The gradient loop's step, run by Python performs (a fused sum's kept values were
    read-only broadcast views there, which an in-place node then wrote into)."""
    inputs, cost, pts = _rnn(lambda x, h, W: T.tanh(T.dot(W, h) + 0.3 * h + x), n=2, d=d)
    w, v = inputs[2], inputs[2].type("v")
    g = graphc.grad(cost, w)
    mode = graphc.Mode(linker="py")
    hvp = graphc.function([*inputs, v], graphc.grad((g * v).sum(), w), mode=mode)
    vv = RNG.normal(size=pts[2].shape)
    want = fd_hvp(graphc.function(inputs, cost, mode=mode), pts, 2, vv)
    np.testing.assert_allclose(hvp(*pts, vv), want, rtol=1e-5, atol=1e-6)


def test_one_value_returned_as_several_outputs():
    """The step returns the same Variable as two states and as a stacked output: each
    output's gradient counts (they were keyed by Variable, and the last one won)."""
    x, w = T.matrix("x"), T.vector("w")

    def step(xt, h, g, w):
        new = T.tanh(h * w + g * 0.5 + xt)
        return new, new, new

    (hs, gs, ys), _ = graphc.scan(step, sequences=x, non_sequences=w,
                                  outputs_info=[T.zeros_like(w), T.ones_like(w), None])  # fmt: skip
    cost = (hs**2).sum() + (gs * 0.7).sum() + (ys * 3).sum()
    f = graphc.function([x, w], cost)
    pts = [RNG.normal(size=(4, 2)), RNG.normal(size=2)]
    grads = graphc.function([x, w], graphc.grad(cost, [x, w]))(*pts)
    for k in range(2):
        np.testing.assert_allclose(grads[k], fd_grad(f, pts, k), rtol=1e-6, atol=1e-8)
