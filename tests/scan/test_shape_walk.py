"""The shape walk a loop of no step relies on (``graphc.opt.shape_walk``): shapes from the
inputs' shapes alone, checked against numpy's on values, and the value substitution."""

from __future__ import annotations

import numpy as np
import pytest

import graphc.tensor as T
from graphc.graph.basic import evaluate, graph_inputs
from graphc.opt.shape_walk import infer_shapes, substitute
from graphc.tensor.shape import shape_tuple

x, y, m = T.dvector("x"), T.dvector("y"), T.dmatrix("m")
GRAPHS = {
    "broadcast": (lambda: (x[:, None] * y + m[0],), lambda xv, yv, mv: xv[:, None] * yv + mv[0]),
    "dot and transpose": (lambda: (T.dot(m.T, m),), lambda xv, yv, mv: mv.T @ mv),
    "reshape by a shape": (
        lambda: (T.reshape(m, (m.shape[1], -1)),),
        lambda xv, yv, mv: mv.reshape(mv.shape[1], -1),
    ),
    "join and slice": (
        lambda: (T.concatenate([x, y])[1:],),
        lambda xv, yv, mv: np.concatenate([xv, yv])[1:],
    ),
    "sum over an axis": (lambda: (m.sum(axis=0) + x.sum(),), lambda xv, yv, mv: mv.sum(0)),
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_shapes_from_the_inputs_shapes_alone(name):
    build, ref = GRAPHS[name]
    outs = build()
    ins = [x, y, m]
    (row,) = infer_shapes(ins, [shape_tuple(v) for v in ins], outs)
    # the entries read the inputs' shapes, never their values (no output is computed)
    for e in row:
        assert all(v.owner is None or v in ins for v in graph_inputs([e]))
    vals = [np.ones(3), np.ones(4), np.ones((3, 4))]
    got = [int(v) for v in evaluate(list(row), dict(zip(ins, vals)))] if row else []
    assert tuple(got) == np.shape(ref(*vals))


def test_substitute_resolves_chains_and_stops_at_a_cycle():
    a, b = T.lscalar("a"), T.lscalar("b")
    d = (a + b) * 2
    (chained,) = substitute([d], {a: b + 1, b: T.constant(np.int64(3))})
    assert int(evaluate([chained], {})[0]) == ((3 + 1) + 3) * 2
    (cyclic,) = substitute([d], {a: a + b})  # a's value reads a: a stays itself there
    assert int(evaluate([cyclic], {a: 1, b: 2})[0]) == (1 + 2) * 2
