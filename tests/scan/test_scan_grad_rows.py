"""The gradient of a loop over every row of its sequence is a view of the backward loop's
rows: nothing is copied into a zero array; over some rows, zeros on the others."""

from __future__ import annotations

import numpy as np
from fd_reference import fd_grad

import graphc
import graphc.tensor as T
from graphc.scan_module.op import Scan
from graphc.tensor.basic import Join
from graphc.tensor.subtensor import Subtensor


def _outer_ops(f) -> set[type]:
    return {type(n.op) for n in f.maker.fgraph.toposort()}


def _seq_loop(n_steps=None):
    x, h0, w = T.dmatrix("x"), T.dvector("h0"), T.dvector("w")
    hs, _ = graphc.scan(lambda xt, hp, w: T.tanh(hp * w + xt), sequences=x,
                        outputs_info=h0, non_sequences=w, n_steps=n_steps)  # fmt: skip
    cost = (hs**2).sum()
    return [x, h0, w], cost


def _made_by(v) -> list[type]:
    """The Ops from ``v`` back through the first input of each node to a Scan."""
    ops = []
    while v.owner is not None:
        ops.append(type(v.owner.op))
        if isinstance(v.owner.op, Scan):
            break
        v = v.owner.inputs[0]
    return ops


def test_the_gradient_of_a_loop_over_every_row_copies_nothing():
    inputs, cost = _seq_loop()
    f = graphc.function(inputs, graphc.grad(cost, inputs))
    # before: x[0:] was the loop's sequence; its gradient was added into zeros
    # (IncSubtensor) after the rows the loop read were joined to the rows it did not (Join)
    assert Join not in _outer_ops(f)
    assert set(_made_by(f.maker.fgraph.outputs[0])) == {Subtensor, Scan}  # a reversed view
    rng = np.random.default_rng(3)
    pts = [rng.normal(size=(6, 4)), rng.normal(size=4), rng.normal(size=4) * 0.5]
    cost_fn = graphc.function(inputs, cost)
    for k, got in enumerate(f(*pts)):
        np.testing.assert_allclose(got, fd_grad(cost_fn, pts, k), rtol=1e-6, atol=1e-8)


def test_the_gradient_of_a_loop_over_some_rows_is_zero_on_the_others():
    inputs, cost = _seq_loop(n_steps=4)
    f = graphc.function(inputs, graphc.grad(cost, inputs))
    rng = np.random.default_rng(4)
    pts = [rng.normal(size=(6, 4)), rng.normal(size=4), rng.normal(size=4) * 0.5]
    cost_fn = graphc.function(inputs, cost)
    grads = f(*pts)
    np.testing.assert_array_equal(grads[0][4:], 0.0)
    for k, got in enumerate(grads):
        np.testing.assert_allclose(got, fd_grad(cost_fn, pts, k), rtol=1e-6, atol=1e-8)
