"""Elemwise in place of an input whose unknown-size axes might broadcast: the input's buffer
is used when it has the output's shape at run time, and a new array otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T

LINKERS = ["c|py", "vm", "py"]


def _inplace_nodes(f):
    return [n for n in f.maker.fgraph.toposort() if getattr(n.op, "inplace_pattern", ())]


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("xs", "ys"), [((3, 4), (3, 4)), ((1, 4), (3, 4)), ((3, 1), (3, 4)), ((1, 1), (3, 4))]
)
def test_inplace_elemwise_falls_back_when_the_broadcast_grows_its_target(linker, xs, ys):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    t = T.exp(x)  # an intermediate of unknown size: the in-place candidate
    out = T.tanh(t * 2.0 + y)
    f = graphc.function([x, y], out, mode=graphc.Mode(linker=linker).excluding("fusion"))
    assert _inplace_nodes(f), "the rewrite makes the elemwise nodes in place"
    rng = np.random.default_rng(0)
    for _ in range(3):  # later calls get earlier buffers back
        xv, yv = rng.normal(size=xs), rng.normal(size=ys)
        np.testing.assert_allclose(f(xv, yv), np.tanh(np.exp(xv) * 2.0 + yv), rtol=1e-12)


@pytest.mark.parametrize("linker", ["c|py", "vm"])
def test_matching_shapes_keep_one_planned_buffer(linker):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    out = (T.exp(x) + y).sum()  # add writes into exp's buffer: one planned buffer, not two
    f = graphc.function([x, y], out, mode=graphc.Mode(linker=linker).excluding("fusion"))
    assert [n.op.scalar_op.name for n in _inplace_nodes(f)] == ["add"]
    xv, yv = np.zeros((50, 40)), np.ones((50, 40))
    for _ in range(2):
        assert f(xv, yv) == 2 * 50 * 40
    assert f.vm.plan_bytes() == xv.nbytes
