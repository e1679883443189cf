"""The backward loop reads the products the forward loop kept instead of computing them
again: which products are kept, one forward loop for the cost and its gradient, and the
gradients (first and second order, tied weights) against finite differences and against
the same gradient with nothing kept."""

from __future__ import annotations

import numpy as np
import pytest
from fd_reference import fd_grad, fd_hvp

import graphc
import graphc.tensor as T
from graphc.graph.basic import ancestors
from graphc.scan_module import grad as scan_grad_mod
from graphc.scan_module.grad import KEPT_FOR_BACKWARD
from graphc.scan_module.op import Scan

RNG = np.random.default_rng(7)
N, B, D = 4, 3, 5  # steps, batch, units


def _gated_step(x, h, U):
    """Tied weights: ``U`` and ``U.T`` both multiply the state, and the products' values
    reach the gradient through tanh's and sigmoid's derivatives."""
    return T.tanh(T.dot(h, U) + x) * T.nnet.sigmoid(T.dot(h, U.T))


def _loop(step):
    x, h0, U = T.tensor3("x"), T.matrix("h0"), T.matrix("U")
    hs, _ = graphc.scan(step, sequences=x, outputs_info=h0, non_sequences=U)
    cost = (hs**2).sum() + hs[-1].sum()
    pts = [RNG.normal(size=(N, B, D)), RNG.normal(size=(B, D)) * 0.5, RNG.normal(size=(D, D)) * 0.4]
    return [x, h0, U], cost, pts


def _loops(f) -> tuple[list, list]:
    """The compiled function's forward loops and gradient loops."""
    scans = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]
    grads = [n for n in scans if (n.op.info.name or "").startswith("grad_of")]
    return [n for n in scans if n not in grads], grads


def _products(node) -> int:
    inner = node.op.inner
    return sum(
        1
        for v in ancestors(inner.outputs)
        if v.owner is not None and isinstance(v.owner.op, KEPT_FOR_BACKWARD)
    )


def test_cost_and_gradient_run_one_forward_loop_that_keeps_both_products():
    inputs, cost, _ = _loop(_gated_step)
    f = graphc.function(inputs, [cost, *graphc.grad(cost, inputs)])
    (forward,), (backward,) = _loops(f)
    assert forward.op.info.n_nit == 2  # dot(h, U) and dot(h, U.T), one row per step
    # the backward step multiplies the adjoint by U and U.T and the state by the adjoints
    # (four products); it no longer computes the forward step's two
    assert _products(backward) == 4


def test_without_the_merge_the_gradient_runs_its_own_forward_loop():
    inputs, cost, pts = _loop(_gated_step)
    outs = [cost, *graphc.grad(cost, inputs)]
    merged = graphc.function(inputs, outs)
    mode = graphc.Mode().excluding("scan_keep_merge", "scan_merge")
    apart = graphc.function(inputs, outs, mode=mode)
    assert len(_loops(apart)[0]) == 2 and len(_loops(merged)[0]) == 1
    for a, b in zip(merged(*pts), apart(*pts)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_a_linear_recurrence_keeps_nothing():
    """``dot(h, U) + x``: the gradient never reads the product's value."""
    inputs, cost, _ = _loop(lambda x, h, U: T.dot(h, U) + x)
    f = graphc.function(inputs, [cost, *graphc.grad(cost, inputs)])
    (forward,), _ = _loops(f)
    assert forward.op.info.n_nit == 0


@pytest.mark.parametrize("keep", [True, False])
def test_gradients_match_finite_differences(keep, monkeypatch):
    if not keep:
        monkeypatch.setattr(scan_grad_mod, "_values_to_keep", lambda op: [])
    inputs, cost, pts = _loop(_gated_step)
    f = graphc.function(inputs, cost)
    grads = graphc.function(inputs, graphc.grad(cost, inputs))(*pts)
    for k in range(3):
        np.testing.assert_allclose(grads[k], fd_grad(f, pts, k), rtol=1e-6, atol=1e-8)


def test_kept_and_recomputed_gradients_agree():
    inputs, cost, pts = _loop(_gated_step)
    kept = graphc.function(inputs, graphc.grad(cost, inputs))(*pts)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(scan_grad_mod, "_values_to_keep", lambda op: [])
        again = graphc.function(inputs, graphc.grad(cost, inputs))(*pts)
    for a, b in zip(kept, again):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_hessian_vector_product_through_the_kept_products():
    """The second derivative reaches the weights through the kept rows too (they are the
    forward loop's outputs, differentiated by its own gradient)."""
    inputs, cost, pts = _loop(_gated_step)
    U = inputs[2]
    V = U.type("V")
    g = graphc.grad(cost, U)
    hvp = graphc.function([*inputs, V], graphc.grad((g * V).sum(), U))
    vv = RNG.normal(size=(D, D))
    want = fd_hvp(graphc.function(inputs, cost), pts, 2, vv)
    assert np.abs(want).max() > 0.1
    np.testing.assert_allclose(hvp(*pts, vv), want, rtol=1e-5, atol=1e-6)
